//! The board: what a judge would draw on paper for a Raw Deal play, in the
//! Timing Breakdown's words and the players' names: the stack of breakdowns
//! (each card, its step, its cost and damage as computed), the reversals,
//! and the areas. A pure function of the state (and the header, for names);
//! `state --json` shows it under `board`, and `replay` says what changed in
//! its words.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Breakdown, Outcome, STEPS, State, index_of};
use crate::event::Header;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Board {
    /// How an uneven division rounds: "down", "up", or "a judge rules on
    /// each uneven value" (gap 1).
    pub rounding: String,
    /// Each player's Ring Area, in seat order, cards in the order they entered.
    pub ring_area: Vec<Pile>,
    /// The other areas (Ringside, a 6a destination), by name, each by player.
    pub areas: Vec<Area>,
    /// The play sequence under way, or between plays the last one.
    pub sequence: Option<Sequence>,
    /// The turn's play sequences before `sequence`, oldest first, each
    /// folded to how its breakdowns ended. The turn is the run of
    /// sequences whose card at step 1 is by the same player, since a
    /// breakdown whose 9e ended the turn.
    pub earlier: Vec<Earlier>,
    /// How many breakdowns have ended in the game (cards played and reversals).
    pub breakdowns_ended: u64,
    /// How many of them were not played (2d): the card remained where it started.
    pub not_played: u64,
    /// How many of them were completely reversed (5c).
    pub reversed: u64,
}

/// An earlier play sequence of the turn, folded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Earlier {
    /// The card played at step 1.
    pub seq: u64,
    pub card: String,
    /// Who played it, by name.
    pub player: String,
    /// How its breakdown ended ("successfully played", "completely
    /// reversed (5c)", "not played (2d)").
    pub outcome: String,
    /// Every breakdown of the sequence in the order played.
    pub breakdowns: Vec<Folded>,
    /// How many breakdowns were successfully played, not played (2d), completely reversed (5c).
    pub played: u64,
    pub not_played: u64,
    pub reversed: u64,
}

/// A breakdown of an earlier sequence: the card and how it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Folded {
    pub seq: u64,
    pub card: String,
    pub player: String,
    /// How many breakdowns it was on top of (0: the card played at step 1).
    pub depth: u64,
    pub outcome: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Pile {
    /// "Alice (p1)".
    pub player: String,
    pub cards: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Area {
    /// "ringside", or the area a 6a card names.
    pub area: String,
    pub piles: Vec<Pile>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Sequence {
    /// The sequence is over (this is the last one).
    pub finished: bool,
    /// Every breakdown of the sequence in the order played: the card played
    /// at step 1, then each reversal (its own breakdown, on top of the one it answers).
    pub breakdowns: Vec<BreakdownLine>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BreakdownLine {
    pub seq: u64,
    pub card: String,
    /// Who played it, by name.
    pub player: String,
    /// The targeted opponent, by name.
    pub opponent: String,
    /// How many breakdowns it is on top of (0: the card played at step 1).
    pub depth: u64,
    /// For a reversal: the card it answers at 5a/5b ("Chokeslam (seq 1)").
    pub reversal_of: Option<String>,
    /// For a reversal: whether it reverses that card once successfully
    /// played (6); the first reversal to a Multi card does not.
    pub reverses: bool,
    /// Where a breakdown under way stands: "5a (the targeted opponent may play a reversal)".
    pub step: Option<String>,
    /// Who has priority, by name: on the breakdown on top only (the ones
    /// under it wait at their step for it to end), and not while a judge rules.
    pub priority: Option<String>,
    /// How an ended breakdown ended: "successfully played", "completely
    /// reversed (5c)" or "not played (2d); the card remains where it started".
    pub outcome: Option<String>,
    /// 1a: the card's targets, as revealed.
    pub targets: Vec<String>,
    pub multi: bool,
    /// 6a: the area it goes to instead of the Ring Area.
    pub goes_to: Option<String>,
    pub printed_cost: i64,
    /// 2a: the player's Fortitude, as recorded.
    pub fortitude: Option<i64>,
    /// 2a: the Fortitude cost with every modifier, as computed.
    pub cost: Option<i64>,
    pub printed_damage: Option<i64>,
    /// 3a, 4, 9a: the damage with the modifiers so far, as computed.
    pub damage: Option<i64>,
    /// 3b: reversal modifiers bar reversals to it.
    pub cannot_be_reversed: bool,
    /// 6: a reversal to it was successfully played: it is considered reversed.
    pub reversed: bool,
    /// 2d: its requirements are met and it is in no area while it resolves.
    pub in_no_area: bool,
    /// 9b: the cards overturned for its damage, in order.
    pub overturned: Vec<String>,
    /// The effects recorded, step by step, in the order applied.
    pub effects: Vec<Effects>,
    /// 9e: it ends the turn.
    pub ends_turn: bool,
    /// An uneven division waiting for a judge ("the damage divides unevenly: 2 to 3; the table said 3").
    pub awaiting_ruling: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Effects {
    /// The step: "2e", "9e", ...
    pub step: String,
    /// Who recorded them, by name.
    pub player: String,
    pub effects: Vec<String>,
}

pub fn board(state: &State, header: &Header) -> Board {
    let piles = |by_player: &std::collections::BTreeMap<String, Vec<String>>| -> Vec<Pile> {
        // Seat order, so both players always show; a pile for anyone else after.
        let mut piles: Vec<Pile> = state
            .seats
            .iter()
            .map(|s| Pile { player: header.name_of(s), cards: by_player.get(s).cloned().unwrap_or_default() })
            .collect();
        for (p, cards) in by_player.iter().filter(|(p, _)| !state.seats.contains(p)) {
            piles.push(Pile { player: header.name_of(p), cards: cards.clone() });
        }
        piles
    };
    // The breakdowns ended and under way, in the order played.
    let mut all: Vec<(&Breakdown, usize, Option<Outcome>)> =
        state.ended.iter().map(|e| (&e.breakdown, e.depth, Some(e.outcome))).collect();
    all.extend(state.stack.iter().enumerate().map(|(depth, b)| (b, depth, None)));
    all.sort_by_key(|(b, _, _)| b.seq);
    let breakdowns = all
        .iter()
        .enumerate()
        .map(|(i, (b, depth, outcome))| {
            // A reversal answers the latest breakdown played before it one level down.
            let answers = all[..i].iter().rev().find(|(_, d, _)| *depth > 0 && *d == depth - 1).map(|(p, _, _)| *p);
            let on_top = outcome.is_none() && *depth + 1 == state.stack.len();
            // "A card that has been completely reversed by the played card
            // moves to the Ringside at this step" (8 of the reversal): out of no area.
            let to_ringside = all.iter().any(|(r, _, _)| r.reverses == Some(b.seq) && r.at > index_of("8"));
            let mut line = line(b, *depth, answers, *outcome, on_top, header);
            line.in_no_area &= !to_ringside;
            line
        })
        .collect();
    Board {
        rounding: state.rounding.clone().unwrap_or_else(|| "a judge rules on each uneven value".into()),
        ring_area: piles(&state.ring_area),
        areas: state.areas.iter().map(|(area, by)| Area { area: area.clone(), piles: piles(by) }).collect(),
        sequence: (!all.is_empty()).then_some(Sequence { finished: state.stack.is_empty(), breakdowns }),
        earlier: earlier(state, header),
        breakdowns_ended: state.history.len() as u64,
        not_played: state.history.iter().filter(|p| p.outcome == Outcome::NotPlayed).count() as u64,
        reversed: state.history.iter().filter(|p| p.outcome == Outcome::Reversed).count() as u64,
    }
}

/// The turn's sequences before the one shown, from the history (the
/// breakdowns in the order they ended: a sequence's card at step 1 ends
/// last). Walked from the newest back to the turn's start only, so a long
/// game costs no more than its turn.
fn earlier(state: &State, header: &Header) -> Vec<Earlier> {
    let mut back = state.history.iter().rev().peekable();
    // Reversals of the sequence under way that already ended.
    while back.next_if(|p| p.depth > 0).is_some() {}
    let player = match state.stack.first() {
        Some(b) => &b.player,
        // Between plays, the last sequence ended is the one shown in full.
        None => match back.next() {
            Some(p) => {
                while back.next_if(|p| p.depth > 0).is_some() {}
                &p.player
            }
            None => return vec![],
        },
    };
    let mut out = Vec::new();
    while let Some(card) = back.next() {
        let mut group = vec![card];
        while let Some(p) = back.next_if(|p| p.depth > 0) {
            group.push(p);
        }
        if card.player != *player || group.iter().any(|p| p.ends_turn) {
            break;
        }
        group.sort_by_key(|p| p.seq);
        let count = |o: Outcome| group.iter().filter(|p| p.outcome == o).count() as u64;
        out.push(Earlier {
            seq: card.seq,
            card: card.card.clone(),
            player: header.name_of(&card.player),
            outcome: ended_as(card.outcome).into(),
            played: count(Outcome::Successful),
            not_played: count(Outcome::NotPlayed),
            reversed: count(Outcome::Reversed),
            breakdowns: group
                .iter()
                .map(|p| Folded {
                    seq: p.seq,
                    card: p.card.clone(),
                    player: header.name_of(&p.player),
                    depth: p.depth as u64,
                    outcome: ended_as(p.outcome).into(),
                })
                .collect(),
        });
    }
    out.reverse();
    out
}

/// How a breakdown ended, in the text's words.
fn ended_as(o: Outcome) -> &'static str {
    match o {
        Outcome::Successful => "successfully played",
        Outcome::Reversed => "completely reversed (5c)",
        Outcome::NotPlayed => "not played (2d)",
    }
}

/// "4 breakdowns: 3 successfully played, 1 completely reversed (5c)": how
/// many ended and how, so a play that ended at 2d is not read as a card played.
pub fn ended_words(n: u64, not_played: u64, reversed: u64) -> String {
    let played = n - not_played - reversed;
    let how: Vec<String> = [(played, ended_as(Outcome::Successful)), (reversed, ended_as(Outcome::Reversed))]
        .into_iter()
        .chain([(not_played, ended_as(Outcome::NotPlayed))])
        .filter(|(k, _)| *k > 0)
        .map(|(k, what)| format!("{k} {what}"))
        .collect();
    let how = if how.is_empty() { String::new() } else { format!(": {}", how.join(", ")) };
    format!("{n} breakdown{}{how}", if n == 1 { "" } else { "s" })
}

fn line(
    b: &Breakdown,
    depth: usize,
    answers: Option<&Breakdown>,
    outcome: Option<Outcome>,
    on_top: bool,
    header: &Header,
) -> BreakdownLine {
    let under_way = outcome.is_none();
    BreakdownLine {
        seq: b.seq,
        card: b.card.clone(),
        player: header.name_of(&b.player),
        opponent: header.name_of(&b.opponent),
        depth: depth as u64,
        reversal_of: answers.map(|p| format!("{} (seq {})", p.card, p.seq)),
        reverses: b.reverses.is_some(),
        step: under_way.then(|| STEPS.get(b.at).map(|s| format!("{} ({})", s.no, s.title))).flatten(),
        priority: (on_top && b.awaiting_ruling.is_none()).then(|| header.name_of(&b.priority)),
        outcome: outcome.map(|o| match o {
            // 2d names what was not satisfied (a record from before it was kept says "2d" alone).
            Outcome::NotPlayed if !b.not_met.is_empty() => {
                format!("not played (2d: {}); the card remains where it started", b.not_met.join("; "))
            }
            Outcome::NotPlayed => "not played (2d); the card remains where it started".into(),
            Outcome::Reversed => "completely reversed (5c)".into(),
            Outcome::Successful => "successfully played".into(),
        }),
        targets: b.targets.clone(),
        multi: b.multi,
        goes_to: b.goes_to.clone(),
        printed_cost: b.printed_cost,
        fortitude: b.fortitude,
        cost: b.cost,
        printed_damage: b.printed_damage,
        damage: b.printed_damage.and(b.damage),
        cannot_be_reversed: b.cannot_be_reversed,
        reversed: b.reversed,
        in_no_area: b.in_no_area,
        overturned: b.overturned.clone(),
        // An empty list (a 3b or 9e resolve without effects) says nothing.
        effects: b
            .effects
            .iter()
            .filter(|(_, _, effects)| !effects.is_empty())
            .map(|(step, who, effects)| Effects {
                step: step.clone(),
                player: header.name_of(who),
                effects: effects.clone(),
            })
            .collect(),
        ends_turn: b.ends_turn,
        awaiting_ruling: b
            .awaiting_ruling
            .as_ref()
            .map(|u| format!("the {} divides unevenly: {} to {}; the table said {}", u.what, u.low, u.high, u.claimed)),
    }
}

/// "Chokeslam (seq 1)".
pub fn name(b: &BreakdownLine) -> String {
    format!("{} (seq {})", b.card, b.seq)
}

/// "cost 2 (printed 3, Fortitude 12), damage 9 (printed 5)": what was computed.
pub fn values(b: &BreakdownLine) -> String {
    let mut parts = vec![];
    match (b.cost, b.fortitude) {
        (Some(c), Some(f)) => parts.push(format!("cost {c} (printed {}, Fortitude {f})", b.printed_cost)),
        _ => parts.push(format!("printed cost {}", b.printed_cost)),
    }
    if let (Some(printed), Some(d)) = (b.printed_damage, b.damage) {
        parts.push(if d == printed { format!("damage {d}") } else { format!("damage {d} (printed {printed})") });
    }
    parts.join(", ")
}

/// What changed from `before` to `after`, in the board's words: one
/// sentence per thing a judge would write down ("Chokeslam (seq 1): damage
/// 12 (was 5)", "No Chance in Hell enters Bob (p2)'s Ring Area").
pub fn changes(before: &Board, after: &Board) -> Vec<String> {
    let mut said = Vec::new();
    // Cards moved to an area first: a successful play enters the Ring Area
    // at 6, before what follows from it.
    let moved = |label: &dyn Fn(&str) -> String, b: &[Pile], a: &[Pile], said: &mut Vec<String>| {
        for p in a {
            let old = b.iter().find(|o| o.player == p.player).map_or(&[][..], |o| &o.cards[..]);
            if p.cards.len() > old.len() && p.cards.starts_with(old) {
                said.push(format!("{} {}", p.cards[old.len()..].join(", "), label(&p.player)));
            }
        }
    };
    moved(&|p| format!("enters {p}'s Ring Area"), &before.ring_area, &after.ring_area, &mut said);
    for a in &after.areas {
        let old = before.areas.iter().find(|o| o.area == a.area).map_or(&[][..], |o| &o.piles[..]);
        moved(&|p| format!("goes to {p}'s {}", a.area), old, &a.piles, &mut said);
    }
    let old_lines: &[BreakdownLine] = match (&before.sequence, &after.sequence) {
        // A sequence is new when its first card is not the one before's.
        (Some(b), Some(a)) if b.breakdowns.first().map(|l| l.seq) == a.breakdowns.first().map(|l| l.seq) => {
            &b.breakdowns
        }
        _ => &[],
    };
    let lines: Vec<&BreakdownLine> = after.sequence.iter().flat_map(|s| &s.breakdowns).collect();
    for l in &lines {
        match old_lines.iter().find(|o| o.seq == l.seq) {
            Some(old) => breakdown_changes(old, l, &mut said),
            None => {
                said.push(played(l));
                breakdown_changes(&as_played(l), l, &mut said);
            }
        }
    }
    // Breakdowns end from the top down: a reversal before the card it answers.
    let mut ends: Vec<&&BreakdownLine> = lines
        .iter()
        .filter(|l| {
            l.outcome.is_some() && old_lines.iter().find(|o| o.seq == l.seq).is_none_or(|o| o.outcome.is_none())
        })
        .collect();
    ends.sort_by_key(|l| std::cmp::Reverse(l.depth));
    for l in ends {
        said.push(format!("the breakdown of {} ends: {}", name(l), l.outcome.as_deref().unwrap_or_default()));
    }
    said
}

/// 1a in words: "Chokeslam (seq 1) played by Alice (p1): printed cost 3, damage 5",
/// or for a reversal "No Chance in Hell (seq 9) played by Bob (p2) as a reversal to Chokeslam (seq 1)".
fn played(l: &BreakdownLine) -> String {
    let mut s = format!("{} played by {}", name(l), l.player);
    if let Some(of) = &l.reversal_of {
        s += &format!(" as a reversal to {of}");
        if !l.reverses {
            s += " (the first reversal to a Multi card: it does not reverse it)";
        }
    }
    s += &format!(": printed cost {}", l.printed_cost);
    if let Some(d) = l.printed_damage {
        s += &format!(", damage {d}");
    }
    if l.multi {
        s += ", Multi";
    }
    if !l.targets.is_empty() {
        s += &format!(", targeting {}", l.targets.join(", "));
    }
    if let Some(area) = &l.goes_to {
        s += &format!(", goes to {area} (6a)");
    }
    s
}

/// A breakdown as it stands when its card is revealed (1a), to compare a new one against.
fn as_played(l: &BreakdownLine) -> BreakdownLine {
    BreakdownLine {
        outcome: None,
        fortitude: None,
        cost: None,
        damage: l.printed_damage,
        cannot_be_reversed: false,
        reversed: false,
        in_no_area: false,
        overturned: vec![],
        effects: vec![],
        ends_turn: false,
        awaiting_ruling: None,
        ..l.clone()
    }
}

fn breakdown_changes(b: &BreakdownLine, a: &BreakdownLine, said: &mut Vec<String>) {
    let card = name(a);
    if (a.cost, a.fortitude) != (b.cost, b.fortitude)
        && let (Some(c), Some(f)) = (a.cost, a.fortitude)
    {
        said.push(format!("{card}: cost {c} (printed {}), against Fortitude {f}", a.printed_cost));
    }
    if let (Some(d), Some(old)) = (a.damage, b.damage)
        && d != old
    {
        said.push(format!("{card}: damage {d} (was {old})"));
    }
    if a.in_no_area && !b.in_no_area {
        said.push(format!("{card}: 2a-2c are met; it is in no area while it resolves (2d)"));
    }
    if a.cannot_be_reversed && !b.cannot_be_reversed {
        said.push(format!("{card} cannot be reversed (3b)"));
    }
    for e in a.effects.iter().skip(b.effects.len()) {
        let list = if e.effects.is_empty() { "no effects".to_string() } else { e.effects.join("; ") };
        said.push(format!("{card}, step {} effects by {}: {list}", e.step, e.player));
    }
    for o in a.overturned.iter().skip(b.overturned.len()) {
        said.push(format!("{card}: {o} is overturned (9b)"));
    }
    if a.ends_turn && !b.ends_turn {
        said.push(format!("{card} ends the turn (9e)"));
    }
    if a.reversed && !b.reversed {
        said.push(format!("{card} is now considered reversed (6)"));
    }
    if let (Some(r), None) = (&a.awaiting_ruling, &b.awaiting_ruling) {
        said.push(format!("{card}: {r}; a judge rules"));
    }
}

/// The outcome as a judge compares two records of it: (label, value) rows,
/// the areas first (where the cards ended up), then the last play sequence.
pub fn outcome(b: &Board) -> Vec<(String, String)> {
    let list = |v: &[String]| if v.is_empty() { "-".to_string() } else { v.join(", ") };
    let mut rows: Vec<(String, String)> =
        b.ring_area.iter().map(|p| (format!("Ring Area of {}", p.player), list(&p.cards))).collect();
    for a in &b.areas {
        rows.extend(a.piles.iter().map(|p| (format!("{} of {}", a.area, p.player), list(&p.cards))));
    }
    rows.push(("breakdowns ended".into(), b.breakdowns_ended.to_string()));
    // Labelled without the seq it began at, so two records line up row by row.
    if let Some(s) = &b.sequence {
        let lines: Vec<String> = s
            .breakdowns
            .iter()
            .map(|l| {
                let state = match (&l.outcome, &l.step) {
                    (Some(o), _) => o.clone(),
                    (None, Some(step)) => format!("at {step}"),
                    (None, None) => "under way".into(),
                };
                format!("{} by {}: {state}; {}", name(l), l.player, values(l))
            })
            .collect();
        let state = if s.finished { "finished" } else { "under way" };
        rows.push((format!("last play sequence ({state})"), lines.join(" | ")));
    }
    rows
}
