//! `arbiter diff A B [--json]`: exit 0 when the records agree, 1 when they differ.

use std::process::ExitCode;

use arbiter::compare::{self, Alignment, Side};
use arbiter::delta::{Change, is_outcome};

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
            Alignment::Content => "aligned by content: the records were made independently".to_string(),
        };
        if d.agree {
            return format!("the records agree: {} events, {how}", d.common);
        }
        // The outcome first, its values on the lines right under the first:
        // it is what a dispute is about. In the board's words where the
        // ruleset has a board, else as state paths.
        let mut s = format!("the records differ ({how}; A {} events, B {})\n", d.a_events, d.b_events);
        let line = |c: &Change| format!("  {}: {} -> {}\n", c.path, show(&c.before), show(&c.after));
        let (outcome, rest): (Vec<&Change>, Vec<&Change>) = d.changes.iter().partition(|c| is_outcome(&c.path));
        if !d.outcome.is_empty() {
            s += "outcome, A against B:\n";
            for r in &d.outcome {
                s += &format!("  {}: {}\n", r.what, against(r.a.as_deref(), r.b.as_deref()));
            }
        } else if outcome.is_empty() {
            s += "outcome: the same\n";
        } else {
            s += "outcome (A -> B):\n";
            outcome.iter().for_each(|c| s += &line(c));
        }
        // Where the records part: the rows that differ and their neighbours,
        // lined up by content, each side in its own numbering.
        s += "the events lined up (* where they differ; ... where rows that agree are left out):\n";
        let words = |e: &Option<Side>| e.as_ref().map(|e| format!("{:>5}  {} {}", e.seq, e.by, e.words));
        let width = d.rows.iter().map(|r| words(&r.a).map_or(1, |w| w.chars().count())).max().unwrap_or(0).min(60);
        let mut last: Option<(Option<u64>, Option<u64>)> = None;
        for r in &d.rows {
            let seqs = (r.a.as_ref().map(|e| e.seq), r.b.as_ref().map(|e| e.seq));
            // A gap in either side's seqs: rows were left out.
            let next = |before: Option<u64>, now: Option<u64>| match (before, now) {
                (Some(x), Some(y)) => y > x + 1,
                _ => false,
            };
            if let Some((pa, pb)) = last
                && (next(pa, seqs.0) || next(pb, seqs.1))
            {
                s += "  ...\n";
            }
            last = Some((seqs.0.or(last.and_then(|l| l.0)), seqs.1.or(last.and_then(|l| l.1))));
            let (a, b) = (words(&r.a).unwrap_or_else(|| "    -".into()), words(&r.b).unwrap_or_else(|| "    -".into()));
            s += &format!("{} A:{a:<width$}  B:{b}\n", if r.same { " " } else { "*" });
        }
        if !d.outcome.is_empty() {
            s += &format!("({} differences in the state: --json lists them)\n", d.changes.len());
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

/// One outcome row, A's value against B's: where both list the same seats or
/// warriors ("Alice (p1) 2, Bob (p2) 0"), only those whose values differ,
/// each once ("Alice (p1) 2 against 1"); else the two values whole.
fn against(a: Option<&str>, b: Option<&str>) -> String {
    let (a, b) = (a.unwrap_or("(not reached)"), b.unwrap_or("(not reached)"));
    let split = |v: &str| -> Vec<(String, String)> {
        v.split(", ")
            .map(|item| item.rsplit_once(' ').map(|(n, x)| (n.to_string(), x.to_string())).unwrap_or_default())
            .collect()
    };
    let (xs, ys) = (split(a), split(b));
    let named = xs.len() == ys.len() && xs.iter().zip(&ys).all(|(x, y)| !x.0.is_empty() && x.0 == y.0);
    if !named {
        return format!("{a} against {b}");
    }
    let differ: Vec<String> = xs
        .iter()
        .zip(&ys)
        .filter(|(x, y)| x.1 != y.1)
        .map(|(x, y)| format!("{} {} against {}", x.0, x.1, y.1))
        .collect();
    differ.join("; ")
}
