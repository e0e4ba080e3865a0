//! `arbiter diff A B [--json]`: exit 0 when the records agree, 1 when they differ.

use std::process::ExitCode;

use arbiter::compare::{self, Alignment};
use arbiter::delta::{Change, is_outcome};
use arbiter::rules::describe;

use super::whatif::show;
use super::{Output, RecordArg, rec};

#[derive(clap::Args)]
pub struct Args {
    /// A stored game or an export file.
    #[arg(add = clap_complete::ArgValueCompleter::new(super::completions::game_names_or_files))]
    pub a: String,
    /// A stored game or an export file.
    #[arg(add = clap_complete::ArgValueCompleter::new(super::completions::game_names_or_files))]
    pub b: String,
}

pub fn run(a: RecordArg, b: RecordArg, out: &Output) -> anyhow::Result<ExitCode> {
    let d = compare::diff(a.source(), b.source()).map_err(rec)?;
    out.emit(serde_json::to_value(&d)?, || {
        let how = match d.alignment {
            Alignment::Hash => format!("aligned by hash ({} hash comparisons)", d.comparisons),
            Alignment::Content => {
                "aligned by content (actor and action): the records were made independently".to_string()
            }
        };
        if d.agree {
            return format!("the records agree: {} events, {how}", d.common);
        }
        let mut s =
            format!("the records differ from seq {} ({how}; {} and {} events)\n", d.common, d.a_events, d.b_events);
        // The outcome first: it is what a dispute is about. In the board's
        // words where the ruleset has a board, else as state paths.
        let line = |c: &Change| format!("  {}: {} -> {}\n", c.path, show(&c.before), show(&c.after));
        let (outcome, rest): (Vec<&Change>, Vec<&Change>) = d.changes.iter().partition(|c| is_outcome(&c.path));
        if !d.outcome.is_empty() {
            s += "outcome:\n";
            s += &super::outcome_text(&d.outcome, "A:", "B:");
        } else if outcome.is_empty() {
            s += "outcome: the same\n";
        } else {
            s += "outcome (A -> B):\n";
            outcome.iter().for_each(|c| s += &line(c));
        }
        // Where the records part: the two sides' events, row by row.
        s += &format!("from seq {}, side by side (* where they differ):\n", d.common);
        let words = |e: Option<&arbiter::event::Event>| e.map(|e| format!("{} {}", e.actor, describe(&e.action)));
        let width =
            d.a_from.iter().map(|e| words(Some(e)).unwrap_or_default().chars().count()).max().unwrap_or(0).min(60);
        for i in 0..d.a_from.len().max(d.b_from.len()) {
            let (ea, eb) = (d.a_from.get(i), d.b_from.get(i));
            let differs = match (ea, eb) {
                (Some(x), Some(y)) => x.actor != y.actor || x.action != y.action,
                _ => true,
            };
            let seq = ea.or(eb).map(|e| e.seq).unwrap_or_default();
            let (a, b) = (words(ea).unwrap_or_else(|| "-".into()), words(eb).unwrap_or_else(|| "-".into()));
            s += &format!("{} {seq:>5}  A: {a:<width$}  B: {b}\n", if differs { "*" } else { " " });
        }
        if d.outcome.is_empty() {
            // Without a board, the rest of the state is the only detail.
        } else {
            s += &format!("({} other differences in the state: --json lists them)\n", d.changes.len());
        }
        if !rest.is_empty() && d.outcome.is_empty() {
            s += "the rest of the state (A -> B):\n";
            rest.iter().for_each(|c| s += &line(c));
        }
        if d.renumbered > 0 {
            s += &format!(
                "({} event references differ only by renumbering after seq {}; not differences)\n",
                d.renumbered, d.common
            );
        }
        s.trim_end().to_string()
    });
    Ok(if d.agree { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
