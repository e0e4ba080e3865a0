//! `arbiter append GAME --actor SEAT [--expect-seq N] ACTION_JSON`, or `append GAME -`.

use std::io::BufRead;
use std::process::ExitCode;

use anyhow::bail;
use arbiter::json::parse_strict;
use arbiter::limits::MAX_LINE_BYTES;
use arbiter::record::{RecordError, Recorder, Submission};
use arbiter::store::Store;

use super::read::view_text;
use super::{Output, rec};

#[derive(clap::Args)]
pub struct Args {
    pub game: String,
    /// Who acts (a seat id or a judge's name). Not used with '-'.
    #[arg(long)]
    pub actor: Option<String>,
    /// Append only if this is the next seq (optimistic concurrency).
    #[arg(long)]
    pub expect_seq: Option<u64>,
    /// RFC 3339 UTC time, when a judge transcribes a paper record.
    #[arg(long)]
    pub at: Option<String>,
    /// The action as JSON, e.g. '{"type":"pass"}', or '-' for JSON Lines on stdin.
    pub action: String,
}

pub fn run(store: &dyn Store, a: Args, out: &Output) -> anyhow::Result<ExitCode> {
    let mut recorder = Recorder::load(store, &a.game).map_err(rec)?;
    let subs = if a.action == "-" {
        if a.actor.is_some() || a.at.is_some() {
            bail!("with '-', each line carries its own actor (and at); drop --actor/--at");
        }
        read_stdin()?
    } else {
        let Some(actor) = a.actor else { bail!("--actor is required (a seat id or a judge's name)") };
        let action = parse_strict(&a.action)
            .map_err(|e| rec(RecordError::Input(format!("the action is not valid JSON: {e}"))))?;
        vec![Submission { actor, action, at: a.at }]
    };
    // Check the whole batch against the rules first: a bad line stores nothing.
    if subs.len() > 1 {
        recorder.check_batch(&subs).map_err(|(i, e)| with_line(e, i + 1))?;
    }
    let mut expect = a.expect_seq;
    for (i, sub) in subs.iter().enumerate() {
        let done =
            recorder.append(sub, expect).map_err(|e| if subs.len() > 1 { with_line(e, i + 1) } else { rec(e) })?;
        expect = expect.map(|_| done.event.seq + 1);
        let view = recorder.table().view();
        out.emit(serde_json::json!({"event": done.event, "duplicate": done.duplicate, "view": view}), || {
            let again = if done.duplicate { " (already stored: retry)" } else { "" };
            format!("seq {} appended{again}: {}\n  now: {}", done.event.seq, done.event.hash, view_text(&view))
        });
    }
    Ok(ExitCode::SUCCESS)
}

fn with_line(e: RecordError, line: usize) -> anyhow::Error {
    anyhow::Error::new(e).context(format!("stdin line {line} was refused; nothing from stdin was stored"))
}

fn read_stdin() -> anyhow::Result<Vec<Submission>> {
    let mut subs = Vec::new();
    for (i, line) in std::io::stdin().lock().lines().enumerate() {
        let line = line?;
        if line.len() > MAX_LINE_BYTES {
            return Err(rec(RecordError::Input(format!("stdin line {} is longer than {MAX_LINE_BYTES} bytes", i + 1))));
        }
        if line.trim().is_empty() {
            continue;
        }
        subs.push(Submission::parse(&line).map_err(|e| with_line(e, i + 1))?);
    }
    Ok(subs)
}
