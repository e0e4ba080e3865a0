//! The board as a judge reads it in the terminal: aligned text, names not
//! ids, countered effects marked. Drawn from the `board` of a `state`
//! answer (local or from a server alike); colour only on a terminal and
//! never with `NO_COLOR` set.

use std::io::IsTerminal;

use arbiter::rules::doomtrooper;
use crossterm::style::Stylize;
use serde_json::Value;

/// Colour or not, decided once per run.
#[derive(Clone, Copy)]
pub struct Paint {
    on: bool,
}

impl Paint {
    pub fn for_stdout() -> Paint {
        Paint { on: std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none() }
    }

    /// A heading.
    pub fn bold(self, s: &str) -> String {
        if self.on { s.bold().to_string() } else { s.to_string() }
    }

    /// Something that no longer counts (a countered effect, a rewound event).
    pub fn struck(self, s: &str) -> String {
        if self.on { s.dark_grey().crossed_out().to_string() } else { s.to_string() }
    }

    /// Something a judge must look at (a pending ruling, a penalty).
    pub fn alert(self, s: &str) -> String {
        if self.on { s.yellow().bold().to_string() } else { s.to_string() }
    }
}

/// The board's lines for `ruleset`, or None if the answer has none.
pub fn text(ruleset: &str, board: &Value, paint: Paint) -> Option<String> {
    match ruleset {
        "doomtrooper" => serde_json::from_value(board.clone()).ok().map(|b| doomtrooper_text(&b, paint)),
        _ => None,
    }
}

fn doomtrooper_text(b: &doomtrooper::Board, paint: Paint) -> String {
    let mut out = String::new();
    let points: Vec<String> = b.points.iter().map(|p| format!("{} {}", p.player, p.points)).collect();
    out += &format!("{}  {}\n", paint.bold("points"), points.join(" · "));
    let Some(c) = &b.combat else {
        out += "no combat yet\n";
        return out;
    };
    let state = if c.finished { " (finished)" } else { "" };
    out += &paint.bold(&format!("combat {}{state}: {} attacks {}", c.number, c.attacker.player, c.defender.player));
    out += "\n";
    let mut row = |label: &str, value: &str| out += &format!("  {label:<14} {value}\n");
    row("attacker", &format!("{} of {}", c.attacker.warrior, c.attacker.player));
    row("defender", &format!("{} of {}", c.defender.warrior, c.defender.player));
    row("battle tactic", c.battle_tactic.as_deref().unwrap_or("-"));
    row("warzone", c.warzone.as_deref().unwrap_or("-"));
    row("strike order", &c.strike_order);
    if c.repeats > 0 {
        row("repeats", &format!("steps 2-15 repeated {} time(s): the combatants changed", c.repeats));
    }
    for e in &c.equipment {
        row("equipment", &format!("{}: {}", e.player, e.items.join(", ")));
    }
    if let Some(award) = &c.award {
        row("to award", award);
    }
    if let Some(card) = &c.ended_by {
        row("ended by", card);
    }
    // A non-simultaneous breakdown determines two combats; name them.
    let parts = match &c.second_combat {
        None => vec![("", &c.first_combat)],
        Some(second) => vec![("first combat ", &c.first_combat), ("second combat ", second)],
    };
    let list = |v: Vec<String>| if v.is_empty() { "-".to_string() } else { v.join(", ") };
    for (part, d) in parts {
        row(
            &format!("{part}ratings"),
            &list(d.standing.iter().map(|r| format!("{} {}", r.warrior, r.rating)).collect()),
        );
        row(
            &format!("{part}results"),
            &list(d.results.iter().map(|r| format!("{} {}", r.warrior, r.outcome)).collect()),
        );
        if !d.status.is_empty() {
            row(
                &format!("{part}status"),
                &list(d.status.iter().map(|r| format!("{} {}", r.warrior, r.outcome)).collect()),
            );
        }
        row(&format!("{part}points"), &list(d.points.iter().map(|p| format!("{} {}", p.player, p.points)).collect()));
    }
    if !c.effects.is_empty() {
        out += "  effects played\n";
        let width = c.effects.iter().map(|e| e.player.chars().count()).max().unwrap_or(0);
        for e in &c.effects {
            let mut line = format!("{:>6}  {:<width$}  {}", e.seq, e.player, e.what);
            if let Some(card) = &e.card {
                line += &format!(" {card}");
            }
            if let Some(t) = e.counters {
                line += &format!(" -> seq {t}");
            }
            if let Some(d) = &e.detail {
                line += &format!(": {d}");
            }
            out += &match &e.countered_by {
                Some(by) => format!("  {}  [countered by {by}]\n", paint.struck(&line)),
                None => format!("  {line}\n"),
            };
        }
    }
    out
}
