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
    pub a: String,
    /// A stored game or an export file.
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
        // The outcome first: it is what a dispute is about.
        let line = |c: &Change| format!("  {}: {} -> {}\n", c.path, show(&c.before), show(&c.after));
        let (outcome, rest): (Vec<&Change>, Vec<&Change>) = d.changes.iter().partition(|c| is_outcome(&c.path));
        if outcome.is_empty() {
            s += "outcome: the same\n";
        } else {
            s += "outcome (A -> B):\n";
            outcome.iter().for_each(|c| s += &line(c));
        }
        for (name, events) in [("A", &d.a_from), ("B", &d.b_from)] {
            s += &format!("{name} from seq {}:\n", d.common);
            for e in events {
                s += &format!("  {:>5} {:<10} {}\n", e.seq, e.actor, describe(&e.action));
            }
        }
        if !rest.is_empty() {
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
