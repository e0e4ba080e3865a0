//! `arbiter whatif GAME|FILE --skip SEQ ... [--then FILE]`: nothing is stored.
//! Exit 0 when every event stays legal, 1 when one becomes illegal.

use std::collections::BTreeSet;
use std::io::BufRead;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use arbiter::compare;
use arbiter::record::Submission;

use super::{Output, RecordArg, rec};

#[derive(clap::Args)]
pub struct Args {
    /// A stored game, or an export file.
    #[arg(add = clap_complete::ArgValueCompleter::new(super::completions::game_names_or_files))]
    pub record: String,
    /// Seqs to leave out.
    #[arg(long, num_args = 1..)]
    pub skip: Vec<u64>,
    /// JSON Lines of {"actor","action"} to append after the record.
    #[arg(long)]
    pub then: Option<PathBuf>,
}

pub fn run(record: RecordArg, a: &Args, out: &Output) -> anyhow::Result<ExitCode> {
    let mut then = Vec::new();
    if let Some(path) = &a.then {
        let file = std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
        for (i, line) in std::io::BufReader::new(file).lines().enumerate() {
            let line = line?;
            if !line.trim().is_empty() {
                then.push(
                    Submission::parse(&line)
                        .map_err(|e| rec(e).context(format!("{} line {}", path.display(), i + 1)))?,
                );
            }
        }
    }
    let skip: BTreeSet<u64> = a.skip.iter().copied().collect();
    let w = compare::whatif(record.source(), &skip, &then).map_err(rec)?;
    out.emit(serde_json::to_value(&w)?, || match &w.illegal {
        Some((seq, v)) => format!("what if: seq {seq} becomes illegal: {v}"),
        None if w.changes.is_empty() => "what if: every event stays legal and the outcome does not change".to_string(),
        // In the board's words: each outcome row as recorded and as it would be.
        None if !w.outcome.is_empty() => {
            let rows = super::outcome_text(&w.outcome, "recorded:", "what if: ");
            format!("what if: every event stays legal; the outcome changes:\n{}", rows.trim_end())
        }
        None => format!(
            "what if: every event stays legal and the board's outcome is the same; the state differs in {} places (--json lists them)",
            w.changes.len()
        ),
    });
    // As `verify`: 1 when an event of the record (or of --then) is not legal without the skipped ones.
    Ok(if w.legal { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

pub fn show(v: &Option<serde_json::Value>) -> String {
    v.as_ref().map_or("(absent)".to_string(), |v| v.to_string())
}
