//! The board as a judge reads it in the terminal: aligned text, names not
//! ids, what no longer counts struck (a countered effect, a dead creature,
//! an inactive character). Drawn from the `board` of a `state`
//! answer (local or from a server alike); colour only on a terminal and
//! never with `NO_COLOR` set.

use std::io::IsTerminal;

use arbiter::rules::{Kind, doomtrooper, gurps, rawdeal, riftbound, wtactics};
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
    let board = board.clone();
    match Kind::named(ruleset)? {
        Kind::Doomtrooper => serde_json::from_value(board).ok().map(|b| doomtrooper_text(&b, paint)),
        Kind::Riftbound => serde_json::from_value(board).ok().map(|b| riftbound_text(&b, paint)),
        Kind::Wtactics => serde_json::from_value(board).ok().map(|b| wtactics_text(&b, paint)),
        Kind::Rawdeal => serde_json::from_value(board).ok().map(|b| rawdeal_text(&b, paint)),
        Kind::Gurps => serde_json::from_value(board).ok().map(|b| gurps_text(&b, paint)),
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
    // Only what stands reads plainly: a countered one is struck.
    for (label, a) in [("battle tactic", &c.battle_tactic), ("warzone", &c.warzone)] {
        let words = doomtrooper::announced_words(a, c.repeats);
        let countered = a.as_ref().is_some_and(|a| a.countered_by.is_some());
        row(label, &if countered { paint.struck(&words) } else { words });
    }
    row("strike order", &c.strike_order);
    if c.repeats > 0 {
        row("repeats", &format!("steps 2-15 repeated {} time(s): the combatants changed", c.repeats));
    }
    for e in &c.equipment {
        row("equipment", &format!("{}: {}", e.player, doomtrooper::items(e)));
    }
    if c.modifiers.is_empty() {
        out += "  standing modifiers  none\n";
    } else {
        out += "  standing modifiers\n";
        let width = c.modifiers.iter().map(|m| m.player.chars().count()).max().unwrap_or(0);
        for m in &c.modifiers {
            let combat = m.combat.as_ref().map(|p| format!(" ({p})")).unwrap_or_default();
            out += &format!("  {:>6}  {:<width$}  {} {}{combat}\n", m.seq, m.player, m.what, m.name);
        }
    }
    let mut row = |label: &str, value: &str| out += &format!("  {label:<14} {value}\n");
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

/// Riftbound: the scores, the turn, the combat and showdown under way (the
/// Chain, Focus), then each battlefield with its controller and units, base,
/// trash and every score recorded.
fn riftbound_text(b: &riftbound::Board, paint: Paint) -> String {
    let mut out = String::new();
    let scores: Vec<String> = b.scores.iter().map(|s| format!("{} {}", s.player, s.score)).collect();
    out += &format!("{}  {}  (victory at {})\n", paint.bold("scores"), scores.join(" · "), b.victory_score);
    if let Some(w) = &b.winner {
        out += &format!("{}\n", paint.alert(&format!("{w} wins")));
    }
    match &b.turn {
        Some(t) => {
            let mut facts = vec![];
            if !t.conquered.is_empty() {
                facts.push(format!("conquered this turn: {}", t.conquered.join(", ")));
            }
            if t.ended {
                facts.push("over: the next in turn order begins the next".into());
            }
            let facts = if facts.is_empty() { String::new() } else { format!(" ({})", facts.join("; ")) };
            out += &format!("turn {}: {}{facts}\n", t.number, t.player)
        }
        None => out += "no turn yet\n",
    }
    for p in &b.pending_combats {
        out += &format!("combat pending at {}: {} attacks, {} defends\n", p.battlefield, p.attacker, p.defender);
    }
    let row = |out: &mut String, label: &str, value: &str| *out += &format!("  {label:<13} {value}\n");
    // A combat's showdown is its first step: one block with the combat.
    if let Some(c) = &b.combat {
        out += &paint.bold(&format!("combat at {}: {} attacks, {} defends", c.battlefield, c.attacker, c.defender));
        out += "\n";
        row(&mut out, "step", &c.step);
        row(
            &mut out,
            "Might summed",
            &format!("{} {} · {} {}", c.attacker, c.attacker_might, c.defender, c.defender_might),
        );
        if !c.attacker_assigned.is_empty() {
            let list: Vec<String> = c.attacker_assigned.iter().map(|a| format!("{} {}", a.unit, a.damage)).collect();
            row(&mut out, "assigned", &format!("{}: {}", c.attacker, list.join(", ")));
        }
        if let Some(who) = &c.assigning {
            row(&mut out, "assigns now", who);
        }
    }
    if let Some(s) = &b.showdown {
        if !s.combat {
            out += &paint.bold(&format!("showdown at {} (no combat)", s.battlefield));
            out += "\n";
        }
        row(&mut out, "showdown", &s.stage);
        row(&mut out, "relevant", &s.relevant.join(", "));
        row(&mut out, "Focus", s.focus.as_deref().unwrap_or("-"));
        if let Some(p) = &s.invited {
            row(&mut out, "invited", p);
        }
        if s.chain.is_empty() {
            row(&mut out, "the Chain", "empty");
        } else {
            row(&mut out, "the Chain", "oldest first; resolves newest first");
            let width = s.chain.iter().map(|i| i.player.chars().count()).max().unwrap_or(0);
            for i in &s.chain {
                out += &format!("  {:>6}  {:<width$}  {} {}\n", i.seq, i.player, i.kind, i.card);
            }
        }
    }
    let all: Vec<&riftbound::UnitLine> = b.battlefields.iter().flat_map(|bf| &bf.units).chain(&b.base).collect();
    let pw = all.iter().map(|u| u.player.chars().count()).max().unwrap_or(0);
    let nw = all.iter().map(|u| u.name.chars().count()).max().unwrap_or(0);
    let unit = |u: &riftbound::UnitLine| {
        let mut line = format!("    {:<pw$}  {:<nw$}  {}", u.player, u.name, riftbound::stats(u));
        if let Some(m) = u.combat_might.filter(|m| *m != u.might) {
            line += &format!("; Might {m} in this combat");
        }
        if u.damage > 0 {
            line += &format!("; damage {}", u.damage);
        }
        line + "\n"
    };
    for bf in &b.battlefields {
        let mut facts = vec![match &bf.controller {
            Some(c) => format!("controlled by {c}"),
            None => "uncontrolled".into(),
        }];
        if let Some(by) = &bf.contested_by {
            facts.push(format!("contested by {by}"));
        }
        if bf.scored_this_turn {
            facts.push("scored this turn".into());
        }
        out += &format!("{}  {}\n", paint.bold(&bf.name), facts.join(", "));
        if bf.units.is_empty() {
            out += "    no units\n";
        }
        bf.units.iter().for_each(|u| out += &unit(u));
    }
    if !b.base.is_empty() {
        out += &format!("{}\n", paint.bold("base"));
        b.base.iter().for_each(|u| out += &unit(u));
    }
    if !b.trash.is_empty() {
        out += &format!("{}  {}\n", paint.bold("trash"), b.trash.join(", "));
    }
    if !b.scoring.is_empty() {
        out += &format!("{}\n", paint.bold("scoring"));
        for s in &b.scoring {
            out += &format!("  {:>6}  {}\n", s.seq, s.said);
        }
    }
    out
}

/// "-" for an empty list.
fn list(v: Vec<String>) -> String {
    if v.is_empty() { "-".to_string() } else { v.join(", ") }
}

fn wtactics_text(b: &wtactics::Board, paint: Paint) -> String {
    let mut out = String::new();
    let row = |out: &mut String, label: &str, value: &str| *out += &format!("  {label:<14} {value}\n");
    let lost: Vec<String> = b.influence_lost.iter().map(|i| format!("{} {}", i.player, i.lost)).collect();
    out += &format!("{}  {}\n", paint.bold("influence lost"), lost.join(" · "));
    match &b.turn {
        Some(t) => {
            let announced = if t.attackers_announced { "attackers announced" } else { "attackers not announced yet" };
            out += &format!("turn {}: {} is the active player ({announced})\n", t.number, t.active);
        }
        None => out += "no turn yet\n",
    }
    if let Some(a) = &b.attack {
        let over = if a.finished { " (over)" } else { "" };
        out +=
            &paint.bold(&format!("attack {}{over}: {} attacks {}", a.number, a.attacking_player, a.defending_player));
        out += "\n";
        let fighters = |v: &[wtactics::Fighter]| v.iter().map(wtactics::fighter).collect::<Vec<_>>().join(" and ");
        for l in &a.attackers {
            row(&mut out, "attacker", &wtactics::fighter(&l.attacker));
            let defended_by = match (l.defenders.as_slice(), l.status.as_str()) {
                (_, "defenders not declared yet") => "not declared yet".to_string(),
                ([], _) => "no one".to_string(),
                (ds, _) => fighters(ds),
            };
            row(&mut out, "defended by", &defended_by);
            if let Some(d) = l.damage {
                row(&mut out, "damage", &format!("{d}, undefended"));
            }
            let chosen = match l.chosen_by.as_deref() {
                None => String::new(),
                Some("the last left") => "the last left; ".to_string(),
                Some(by) => format!("chosen by {by}; "),
            };
            let combat = match (&l.result, l.status.as_str()) {
                (Some(r), _) => {
                    let how = if r.ruling { "ruled" } else { "resolved" };
                    format!("{chosen}{how} at seq {} by {}: {}", r.seq, r.recorded_by, wtactics::result_words(r))
                }
                (None, "undefended" | "defenders not declared yet") => String::new(),
                (None, status) if status.starts_with("undefended") => status.to_string(),
                (None, status) => format!("{chosen}{status}"),
            };
            if !combat.is_empty() {
                row(&mut out, "combat", &combat);
            }
        }
        if let Some(lost) = a.influence_lost {
            row(&mut out, "influence", &format!("{} loses {lost}", a.defending_player));
        }
        if !a.responses.is_empty() {
            out += "  responses\n";
            let width = a.responses.iter().map(|r| r.player.chars().count()).max().unwrap_or(0);
            for r in &a.responses {
                out += &format!("  {:>6}  {:<width$}  {} {}, in {}\n", r.seq, r.player, r.kind, r.card, r.during);
            }
        }
    }
    if !b.creatures.is_empty() {
        out += &paint.bold("creatures");
        out += "\n";
        let name = b.creatures.iter().map(|c| c.name.chars().count()).max().unwrap_or(0);
        let player = b.creatures.iter().map(|c| c.player.chars().count()).max().unwrap_or(0);
        for c in &b.creatures {
            let mut line = format!("{:<name$}  {:<player$}  ATK {} DEF {}", c.name, c.player, c.atk, c.def);
            if c.marked {
                line += "  marked";
            }
            if !c.enchantments.is_empty() {
                line += &format!("  enchanted: {}", c.enchantments.join(", "));
            }
            out += &match c.dead {
                true => format!("  {}  [dead]\n", paint.struck(&line)),
                false => format!("  {line}\n"),
            };
        }
    }
    out += &paint.bold("discard piles");
    out += "\n";
    for p in &b.discard_piles {
        row(&mut out, &p.player, &list(p.cards.clone()));
    }
    out
}

fn rawdeal_text(b: &rawdeal::Board, paint: Paint) -> String {
    let mut out = String::new();
    let piles = |piles: &[rawdeal::Pile]| {
        piles.iter().map(|p| format!("{}: {}", p.player, list(p.cards.clone()))).collect::<Vec<_>>().join(" · ")
    };
    let mut top = |label: &str, value: &str| out += &format!("{} {value}\n", paint.bold(&format!("{label:<13}")));
    top("rounding", &b.rounding);
    top("Ring Area", &piles(&b.ring_area));
    for a in &b.areas {
        top(&a.area, &piles(&a.piles));
    }
    // How each ended, so a play that ended at 2d is not read as a card played.
    top("ended so far", &rawdeal::ended_words(b.breakdowns_ended, b.not_played, b.reversed));
    // The turn's earlier sequences, folded: one line each, reversals under it.
    if !b.earlier.is_empty() {
        out += &paint.bold("earlier this turn");
        out += "\n";
    }
    for e in &b.earlier {
        let n = e.breakdowns.len() as u64;
        let counts = rawdeal::ended_words(n, e.not_played, e.reversed);
        out += &format!("  seq {}  {} by {}: {} · {counts}\n", e.seq, e.card, e.player, e.outcome);
        for f in e.breakdowns.iter().filter(|f| f.depth > 0) {
            let pad = "  ".repeat(f.depth as usize + 1);
            out += &format!("{pad}seq {}  {} by {}: {}\n", f.seq, f.card, f.player, f.outcome);
        }
    }
    let Some(s) = &b.sequence else {
        out += "no card played yet\n";
        return out;
    };
    let over = if s.finished { " (over)" } else { "" };
    out += &paint.bold(&format!("play sequence{over}"));
    out += "\n";
    for l in &s.breakdowns {
        // A reversal is drawn on top of (indented under) the card it answers.
        let pad = "  ".repeat(l.depth as usize + 1);
        let mut head = format!("{pad}seq {}  {} by {}", l.seq, l.card, l.player);
        if let Some(of) = &l.reversal_of {
            head += &format!(", reversal to {of}");
            if !l.reverses {
                head += " (the first to a Multi card: does not reverse it)";
            }
        }
        head += &match (&l.outcome, &l.step, &l.priority) {
            (Some(o), _, _) => format!(": {o}"),
            (None, Some(step), Some(p)) => format!(": at {step}, {p} has priority"),
            (None, Some(step), None) if l.awaiting_ruling.is_some() => format!(": at {step}, a judge rules"),
            (None, Some(step), None) => format!(": waits at {step}"),
            _ => String::new(),
        };
        out += &head;
        out += "\n";
        let mut facts = vec![rawdeal::values(l)];
        if l.multi {
            facts.push("Multi".into());
        }
        if !l.targets.is_empty() {
            facts.push(format!("targeting {}", l.targets.join(", ")));
        }
        if let Some(area) = &l.goes_to {
            facts.push(format!("goes to {area} (6a)"));
        }
        if l.in_no_area {
            facts.push("in no area".into());
        }
        if l.cannot_be_reversed {
            facts.push("cannot be reversed (3b)".into());
        }
        if l.reversed {
            facts.push("reversed (6)".into());
        }
        if l.ends_turn {
            facts.push("ends the turn (9e)".into());
        }
        out += &format!("{pad}    {}\n", facts.join(" · "));
        for e in &l.effects {
            out += &format!("{pad}    step {} effects by {}: {}\n", e.step, e.player, e.effects.join("; "));
        }
        if !l.overturned.is_empty() {
            out += &format!("{pad}    overturned (9b): {}\n", l.overturned.join(", "));
        }
        if let Some(r) = &l.awaiting_ruling {
            out += &format!("{pad}    {}\n", paint.alert(&format!("{r}: a judge rules")));
        }
    }
    out
}

fn gurps_text(b: &gurps::Board, paint: Paint) -> String {
    let mut out = String::new();
    let row = |out: &mut String, label: &str, value: &str| *out += &format!("  {label:<14} {value}\n");
    out += &format!("{}  {}\n", paint.bold("time"), b.time);
    let Some(c) = &b.combat else {
        out += "no combat yet\n";
        return out;
    };
    out += &paint.bold(&match c.ended {
        true => format!("combat {} (ended in second {})", c.number, c.second),
        false => format!("combat {}, second {}", c.number, c.second),
    });
    out += "\n";
    if let Some(turn) = &c.turn {
        let chosen = c.sequence.iter().find(|x| x.acting).and_then(|x| x.maneuver.as_deref()).unwrap_or_default();
        let doing = match c.maneuver_chosen {
            true => format!("{chosen} chosen; a pass ends the turn"),
            false => "choosing a maneuver".to_string(),
        };
        row(&mut out, "turn", &format!("{turn}: {doing}"));
    }
    if let Some(at) = &c.resumes_at {
        row(&mut out, "resumes at", &format!("{at}'s turn"));
    }
    for t in &c.ties {
        row(&mut out, "tied", &format!("{}: {}", t.combatants.join(", "), t.settled_by));
    }
    out += "  turn sequence\n";
    let width = |f: &dyn Fn(&gurps::ChartLine) -> usize| c.sequence.iter().map(f).max().unwrap_or(0);
    let (name, player, side) =
        (width(&|x| x.name.chars().count()), width(&|x| x.player.chars().count()), width(&|x| x.side.chars().count()));
    for (i, x) in c.sequence.iter().enumerate() {
        let mark = if x.acting { ">" } else { " " };
        let pc = if x.pc { "PC " } else { "NPC" };
        let mut line = format!(
            "{:>2}  {:<name$}  {:<player$}  {:<side$}  {pc}  Basic Speed {}  DX {}",
            i + 1,
            x.name,
            x.player,
            x.side,
            x.basic_speed,
            x.dx
        );
        match (&x.maneuver, &x.limits) {
            (Some(m), Some(l)) => line += &format!("  {m}: {l}"),
            (Some(m), None) => line += &format!("  {m}"),
            _ => {}
        }
        out += &match x.active {
            true => format!("  {mark} {line}\n"),
            false => format!("  {mark} {}  [inactive]\n", paint.struck(&line)),
        };
    }
    if let Some(e) = &b.latest {
        let n = b.entries;
        let entries = format!("{n} entr{}", if n == 1 { "y" } else { "ies" });
        row(&mut out, "record", &format!("{entries}; the latest, seq {}: {}", e.seq, e.text));
    }
    out
}
