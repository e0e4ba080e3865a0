//! The board: what a judge would draw on paper for the combat, in the
//! text's words and the players' names. A pure function of the state (and
//! the header, for names); `state --json` shows it under `board`, the CLI
//! and the replay page draw it.

use std::collections::{BTreeMap, BTreeSet};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Combat, Determined, Fate, Order, Play, State};
use crate::event::Header;
use crate::kernel::Effect;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Board {
    /// Each player's points so far, in seat order.
    pub points: Vec<Points>,
    /// The combat under way, or between combats the last one finished.
    pub combat: Option<CombatBoard>,
    /// How many combats are finished.
    pub combats_finished: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Points {
    /// "Alice (p1)".
    pub player: String,
    pub points: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CombatBoard {
    pub number: u64,
    /// The combat is over (this is the last one finished).
    pub finished: bool,
    pub attacker: Side,
    pub defender: Side,
    /// The battle tactic announced in this round of steps 2-15, and whether
    /// it stands. Absent before it is announced, and after the combatants
    /// change (`repeats` > 0) until it is announced again.
    pub battle_tactic: Option<Announced>,
    /// The warzone announced in this round of steps 2-15 (its name or
    /// "none"), and whether it stands; absent as `battle_tactic`.
    pub warzone: Option<Announced>,
    /// The modifiers that stand, in record order: the battle tactic, the
    /// warzone (unless none), the equipment used and the cards played in
    /// DETERMINE EQUIPMENT USAGE and MODIFY COMBAT RATINGS that no standing
    /// counter nullified (what step 37 counts, "disregard" the rest).
    pub modifiers: Vec<Modifier>,
    /// "simultaneous", or who strikes first by name.
    pub strike_order: String,
    /// Every effect played in this combat, in record order.
    pub effects: Vec<EffectLine>,
    /// Equipment announced as used, by player.
    pub equipment: Vec<Equipment>,
    /// Steps 2-15 were repeated this many times because the combatants changed.
    pub repeats: u64,
    /// The award being made at steps 45-48, before counters may answer it
    /// ("2 points to Alice (p1), seq 66").
    pub award: Option<String>,
    /// The combat-ending card that ended the combat ("Smoke Bomb (seq 20)").
    pub ended_by: Option<String>,
    /// Combat ratings, results, status and points: the whole combat, or the
    /// first combat of a non-simultaneous breakdown.
    pub first_combat: Determination,
    /// The second combat of a non-simultaneous breakdown.
    pub second_combat: Option<Determination>,
}

/// A battle tactic or warzone as announced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Announced {
    pub seq: u64,
    /// "Fight", "Venus Jungle"; "none" for a warzone the defender does not defend from.
    pub name: String,
    /// The standing counter that nullified it ("Cancel (seq 3) by Bob (p2)");
    /// absent while it stands.
    pub countered_by: Option<String>,
}

/// A modifier that stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Modifier {
    pub seq: u64,
    /// Who announced or played it, by name.
    pub player: String,
    /// "battle tactic", "warzone", "equipment", "DETERMINE EQUIPMENT USAGE",
    /// "MODIFY COMBAT RATINGS".
    pub what: String,
    /// The tactic, the warzone, the equipment ("Bolter, Shield") or the card.
    pub name: String,
    /// In a non-simultaneous breakdown, the combat it belongs to ("first
    /// combat", "second combat"); the battle tactic and warzone belong to both.
    pub combat: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Side {
    /// "Alice (p1)".
    pub player: String,
    pub warrior: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EffectLine {
    pub seq: u64,
    /// Who played it, by name.
    pub player: String,
    pub card: Option<String>,
    /// What it does, in the text's words ("MODIFY COMBAT RATINGS", "COUNTER").
    pub what: String,
    /// What it said, in words ("the defender becomes Legionnaire Sergeant"), if anything.
    pub detail: Option<String>,
    /// For a counter: the seq it nullifies.
    pub counters: Option<u64>,
    /// Whether it still stands (no standing counter nullifies it).
    pub stands: bool,
    /// The standing counter that nullified it ("Cancel (seq 3) by Bob (p2)").
    pub countered_by: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Equipment {
    pub player: String,
    pub items: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Determination {
    /// Step 32: combat ratings.
    pub standing: Vec<Rated>,
    /// Step 37: results.
    pub results: Vec<Fated>,
    /// Step 44: status after ESCAPE WOUNDING.
    pub status: Vec<Fated>,
    /// Points awarded, by name.
    pub points: Vec<Points>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Rated {
    pub warrior: String,
    pub rating: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Fated {
    pub warrior: String,
    /// "unharmed", "wounded", "killed", "removed from play".
    pub outcome: String,
}

pub fn board(state: &State, header: &Header) -> Board {
    let combat = state.combat.as_ref().map(|c| (c, false)).or(state.finished.last().map(|c| (c, true)));
    Board {
        points: state.seats.iter().map(|s| Points { player: header.name_of(s), points: state.points[s] }).collect(),
        combat: combat.map(|(c, finished)| combat_board(c, finished, header)),
        combats_finished: state.finished.len() as u64,
    }
}

/// The first standing counter against each effect a standing counter
/// nullified, by the effect's seq: read once for every line of a board
/// (a search of the whole ledger for each line grew with its square).
fn standing_counters<'c>(c: &'c Combat, standing: &BTreeSet<u64>) -> BTreeMap<u64, &'c Effect> {
    let mut against = BTreeMap::new();
    for k in c.effects.effects.iter().filter(|k| standing.contains(&k.seq)) {
        if let Some(target) = k.counters {
            against.entry(target).or_insert(k);
        }
    }
    against
}

fn combat_board(c: &Combat, finished: bool, header: &Header) -> CombatBoard {
    let standing = c.effects.standing();
    let against = standing_counters(c, &standing);
    let countered_by = |seq: u64| {
        against.get(&seq).map(|k| {
            format!("{} (seq {}) by {}", k.card.as_deref().unwrap_or("a counter"), k.seq, header.name_of(&k.seat))
        })
    };
    let announced = |seq: u64| Announced {
        seq,
        name: c.announced.get(&seq).cloned().unwrap_or_default(),
        countered_by: countered_by(seq),
    };
    let effects = c
        .effects
        .effects
        .iter()
        .map(|e| {
            let countered_by = countered_by(e.seq);
            EffectLine {
                seq: e.seq,
                player: header.name_of(&e.seat),
                card: e.card.clone(),
                what: what(&e.kind).to_string(),
                detail: detail(c, e.seq, &e.kind, header),
                counters: e.counters,
                stands: standing.contains(&e.seq),
                countered_by,
            }
        })
        .collect();
    CombatBoard {
        number: c.number,
        finished,
        attacker: Side { player: header.name_of(&c.attacking_player), warrior: c.attacker.clone() },
        defender: Side { player: header.name_of(&c.defending_player), warrior: c.defender.clone() },
        battle_tactic: c.battle_tactic.as_ref().map(|(seq, _)| announced(*seq)),
        warzone: c.warzone.as_ref().map(|(seq, _)| announced(*seq)),
        modifiers: modifiers(c, &standing, header),
        strike_order: match &c.order {
            Order::Simultaneous => "simultaneous".into(),
            Order::NonSimultaneous { first, .. } => format!("{} strikes first", header.name_of(first)),
        },
        effects,
        equipment: c
            .equipment
            .iter()
            .map(|(s, items)| Equipment { player: header.name_of(s), items: items.clone() })
            .collect(),
        repeats: c.repeats,
        award: c.award.map(|(seq, points)| {
            let to = c.effects.get(seq).map(|e| header.name_of(&e.seat)).unwrap_or_default();
            format!("{points} points to {to}, seq {seq}")
        }),
        ended_by: c.ended_by.map(|seq| {
            let card = c.effects.get(seq).and_then(|e| e.card.clone()).unwrap_or_default();
            format!("{card} (seq {seq})")
        }),
        first_combat: determination(&c.first_combat, header),
        second_combat: c.second_combat.as_ref().map(|d| determination(d, header)),
    }
}

/// The text's heading for an effect the ledger names by kind.
fn what(kind: &str) -> &str {
    match kind {
        "battle_tactic" => "BATTLE TACTIC",
        "warzone" => "WARZONE",
        "counter" => "COUNTER",
        "change_combatants" => "CHANGE COMBATANTS",
        "strike_order" => "DETERMINE NON-SIMULTANEOUS COMBAT",
        "end_combat" => "COMBAT ENDING CARD",
        "equipment" => "DETERMINE EQUIPMENT USAGE",
        "equipment_used" => "equipment used",
        "modify" => "MODIFY COMBAT RATINGS",
        "save" => "ESCAPE WOUNDING",
        "modify_award" => "AWARD POINTS",
        "award" => "points awarded",
        other => other,
    }
}

/// What an effect said, in words, where the record says more than its card.
fn detail(c: &Combat, seq: u64, kind: &str, header: &Header) -> Option<String> {
    match (kind, c.plays.get(&seq)) {
        (_, Some(Play::ChangeCombatants { attacker, defender, .. })) => {
            let mut parts = Vec::new();
            if let Some(a) = attacker {
                parts.push(format!("the attacker becomes {a}"));
            }
            if let Some(d) = defender {
                parts.push(format!("the defender becomes {d}"));
            }
            Some(parts.join(", "))
        }
        (_, Some(Play::StrikeOrder { first: Some(f), .. })) => Some(format!("{} strikes first", header.name_of(f))),
        (_, Some(Play::StrikeOrder { first: None, .. })) => Some("strikes are simultaneous".into()),
        (_, Some(Play::Save { warrior, .. })) => Some(format!("saves {warrior}")),
        (_, Some(Play::ModifyAward { points, .. })) => Some(format!("the award becomes {points} points")),
        ("equipment_used", _) => {
            let items = c.effects.get(seq).and_then(|e| c.equipment.get(&e.seat));
            Some(items.filter(|i| !i.is_empty()).map_or("none".into(), |i| i.join(", ")))
        }
        // Every round's announcement keeps its name, after a repeat too,
        // and says it no longer stands once the combatants changed.
        ("battle_tactic" | "warzone", _) => {
            let now = [c.battle_tactic.as_ref().map(|t| t.0), c.warzone.as_ref().map(|w| w.0)];
            let name = c.announced.get(&seq)?;
            Some(match now.contains(&Some(seq)) {
                true => name.clone(),
                false => format!("{name} (before the combatants changed)"),
            })
        }
        _ => None,
    }
}

/// The modifiers that stand: what step 37 counts. The effects a counter
/// nullified, and a battle tactic or warzone of an earlier round of steps
/// 2-15, are left out.
fn modifiers(c: &Combat, standing: &BTreeSet<u64>, header: &Header) -> Vec<Modifier> {
    let this_round = |pair: Option<u64>, seq: u64| pair == Some(seq);
    // Equipment and cards belong to one combat of a non-simultaneous breakdown.
    let combat = |scope: u64| match (&c.order, &c.second_combat) {
        (Order::Simultaneous, _) => None,
        (_, Some(_)) if scope >= c.sub_scope => Some("second combat".to_string()),
        _ => Some("first combat".to_string()),
    };
    c.effects
        .effects
        .iter()
        .filter(|e| standing.contains(&e.seq))
        .filter_map(|e| {
            let (what, name, combat) = match e.kind.as_str() {
                "battle_tactic" if this_round(c.battle_tactic.as_ref().map(|t| t.0), e.seq) => {
                    ("battle tactic", c.announced.get(&e.seq)?.clone(), None)
                }
                "warzone" if this_round(c.warzone.as_ref().map(|w| w.0), e.seq) => {
                    ("warzone", c.warzone.as_ref()?.1.clone()?, None)
                }
                "equipment_used" => {
                    let items = c.equipment.get(&e.seat).filter(|i| !i.is_empty())?;
                    ("equipment", items.join(", "), combat(e.scope))
                }
                "equipment" | "modify" => (what(&e.kind), e.card.clone()?, combat(e.scope)),
                _ => return None,
            };
            Some(Modifier { seq: e.seq, player: header.name_of(&e.seat), what: what.into(), name, combat })
        })
        .collect()
}

/// A battle tactic or warzone row in words: what stands, "~~Fight~~ (seq
/// 2, countered by ...)" for what a counter nullified, "to be announced
/// again" after the combatants changed, "-" before it is announced.
pub fn announced_words(a: &Option<Announced>, repeats: u64) -> String {
    match a {
        None if repeats > 0 => "to be announced again (the combatants changed)".into(),
        None => "-".into(),
        Some(Announced { seq, name, countered_by: None }) => format!("{name} (seq {seq})"),
        Some(Announced { seq, name, countered_by: Some(by) }) => {
            format!("~~{name}~~ (seq {seq}, countered by {by})")
        }
    }
}

fn determination(d: &Determined, header: &Header) -> Determination {
    let fated = |list: &Option<Vec<super::Outcome>>| {
        list.iter().flatten().map(|o| Fated { warrior: o.warrior.clone(), outcome: fate(o.outcome).into() }).collect()
    };
    Determination {
        standing: d.standing.iter().flatten().map(|r| Rated { warrior: r.warrior.clone(), rating: r.rating }).collect(),
        results: fated(&d.results),
        status: fated(&d.status),
        points: d.points.iter().map(|(s, p)| Points { player: header.name_of(s), points: *p }).collect(),
    }
}

fn fate(f: Fate) -> &'static str {
    match f {
        Fate::Unharmed => "unharmed",
        Fate::Wounded => "wounded",
        Fate::Killed => "killed",
        Fate::RemovedFromPlay => "removed from play",
    }
}

/// What changed from `before` to `after`, in the board's words: one
/// sentence per thing a judge would write down ("Body Guard (seq 11) by Bob
/// (p2): the defender becomes Legionnaire Sergeant", "seq 2 BATTLE TACTIC
/// is countered by Cancel (seq 3) by Bob (p2)").
pub fn changes(before: &Board, after: &Board) -> Vec<String> {
    let mut said = Vec::new();
    match (&before.combat, &after.combat) {
        (Some(b), Some(a)) if b.number == a.number => combat_changes(b, a, &mut said),
        (_, Some(a)) => {
            said.push(format!(
                "combat {}: {} attacks {} with {} against {}",
                a.number, a.attacker.player, a.defender.player, a.attacker.warrior, a.defender.warrior
            ));
            combat_changes(&empty_like(a), a, &mut said);
        }
        (_, None) => {}
    }
    for (b, a) in before.points.iter().zip(&after.points) {
        if b.points != a.points {
            said.push(format!("{} now has {} points (was {})", a.player, a.points, b.points));
        }
    }
    said
}

/// A combat as it stands when first announced, to compare a new one against.
fn empty_like(c: &CombatBoard) -> CombatBoard {
    CombatBoard {
        battle_tactic: None,
        warzone: None,
        modifiers: vec![],
        strike_order: "simultaneous".into(),
        effects: vec![],
        equipment: vec![],
        repeats: 0,
        award: None,
        ended_by: None,
        finished: false,
        first_combat: Determination::default(),
        second_combat: None,
        ..c.clone()
    }
}

fn combat_changes(b: &CombatBoard, a: &CombatBoard, said: &mut Vec<String>) {
    let added: Vec<&EffectLine> = a.effects.iter().filter(|e| !b.effects.iter().any(|o| o.seq == e.seq)).collect();
    // Equipment used and points awarded are said by their own lines below.
    for e in added.iter().filter(|e| e.what != "equipment used" && e.what != "points awarded") {
        said.push(effect_sentence(e, a));
    }
    // An announcement already said what it set.
    let announced = |what: &str| added.iter().any(|e| e.what == what);
    for e in &a.effects {
        let Some(old) = b.effects.iter().find(|o| o.seq == e.seq) else { continue };
        match (old.stands, e.stands, &e.countered_by) {
            // A counter played just now has said so already.
            (true, false, Some(_)) if added.iter().any(|k| k.counters == Some(e.seq)) => {}
            (true, false, Some(by)) => said.push(format!("{} is countered by {by}", name(e))),
            (false, true, _) => {
                // The counter that stood against it: gone from the board, a
                // judge's rewind took it back (nothing else removes an effect
                // within a combat); still there, a counter of its own fell on it.
                let against = b.effects.iter().find(|k| k.counters == Some(e.seq) && k.stands).map(|k| k.seq);
                let why = match against {
                    Some(k) if !a.effects.iter().any(|o| o.seq == k) => format!("(seq {k}) was rewound"),
                    Some(k) => format!("(seq {k}) was countered"),
                    None => "was countered".to_string(),
                };
                said.push(format!("{} stands again: the counter against it {why}", name(e)))
            }
            _ => {}
        }
    }
    let mut changed = |what: &str, old: &str, new: &str| {
        let said_already =
            (what == "battle tactic" && announced("BATTLE TACTIC")) || (what == "warzone" && announced("WARZONE"));
        if old != new && !said_already {
            let sep = if what.ends_with("becomes") { " " } else { ": " };
            said.push(format!("{what}{sep}{new}"));
        }
    };
    changed("the attacker becomes", &b.attacker.warrior, &a.attacker.warrior);
    changed("the defender becomes", &b.defender.warrior, &a.defender.warrior);
    // What was announced, or that it is to be announced again; a counter
    // against it is said by the effect lines above.
    let row = |x: &Option<Announced>, repeats: u64| match x {
        None if repeats > 0 => "to be announced again".to_string(),
        None => String::new(),
        Some(x) => x.name.clone(),
    };
    changed("battle tactic", &row(&b.battle_tactic, b.repeats), &row(&a.battle_tactic, a.repeats));
    changed("warzone", &row(&b.warzone, b.repeats), &row(&a.warzone, a.repeats));
    changed("strike order", &b.strike_order, &a.strike_order);
    if a.repeats > b.repeats {
        said.push("the combatants changed: steps 2-15 are repeated".into());
    }
    for e in a.equipment.iter().filter(|e| !b.equipment.contains(e)) {
        said.push(format!("{} uses {}", e.player, items(e)));
    }
    let parts = [("", &b.first_combat, &a.first_combat)];
    let second = b.second_combat.clone().unwrap_or_default();
    let parts = parts.into_iter().chain(a.second_combat.as_ref().map(|s| ("second combat ", &second, s)));
    for (part, old, new) in parts {
        if old.standing != new.standing && !new.standing.is_empty() {
            let list: Vec<String> = new.standing.iter().map(|r| format!("{} {}", r.warrior, r.rating)).collect();
            said.push(format!("{part}combat ratings: {}", list.join(", ")));
        }
        for (key, o, n) in [("results", &old.results, &new.results), ("status", &old.status, &new.status)] {
            if o != n && !n.is_empty() {
                let list: Vec<String> = n.iter().map(|r| format!("{} {}", r.warrior, r.outcome)).collect();
                said.push(format!("{part}{key}: {}", list.join(", ")));
            }
        }
        for p in new.points.iter().filter(|p| !old.points.contains(p)) {
            said.push(format!("{part}points awarded: {} {}", p.player, p.points));
        }
    }
    if let (Some(award), true) = (&a.award, a.award != b.award) {
        said.push(format!("to award: {award}; counters may answer it"));
    }
    if let (None, Some(card)) = (&b.ended_by, &a.ended_by) {
        said.push(format!("{card} ends the combat: next, step 37"));
    }
    if a.finished && !b.finished {
        said.push(format!("combat {} is over", a.number));
    }
}

/// The equipment a player announced: "Bolter, Shield", or "no equipment".
pub fn items(e: &Equipment) -> String {
    if e.items.is_empty() { "no equipment".into() } else { e.items.join(", ") }
}

/// "seq 2 BATTLE TACTIC", "seq 51 Shield of Faith".
fn name(e: &EffectLine) -> String {
    format!("seq {} {}", e.seq, e.card.as_deref().unwrap_or(&e.what))
}

fn effect_sentence(e: &EffectLine, c: &CombatBoard) -> String {
    let card = e.card.as_deref().map(|c| format!("{c} (seq {})", e.seq)).unwrap_or_else(|| format!("seq {}", e.seq));
    match (e.counters, &e.detail) {
        (Some(t), _) => {
            let target = c.effects.iter().find(|o| o.seq == t).map(name).unwrap_or_else(|| format!("seq {t}"));
            format!("{card} by {} counters {target}", e.player)
        }
        (None, Some(d)) if e.card.is_some() => format!("{card} by {}, {}: {d}", e.player, e.what),
        (None, Some(d)) => format!("{} by {}: {d}", e.what, e.player),
        (None, None) if e.card.is_some() => format!("{card} by {}, {}", e.player, e.what),
        (None, None) => format!("{} by {}", e.what, e.player),
    }
}

/// The outcome as a judge compares two records of it: (label, value) rows,
/// the points first.
pub fn outcome(b: &Board) -> Vec<(String, String)> {
    let list = |v: Vec<String>| if v.is_empty() { "-".to_string() } else { v.join(", ") };
    let mut rows =
        vec![("points".to_string(), list(b.points.iter().map(|p| format!("{} {}", p.player, p.points)).collect()))];
    rows.push(("combats finished".into(), b.combats_finished.to_string()));
    // The combat under way, or the last one finished: labelled without its
    // number, so two records at different combats line up row by row.
    if let Some(c) = &b.combat {
        let state = if c.finished { "finished" } else { "under way" };
        let who = format!(
            "{} of {} attacks {} of {}",
            c.attacker.warrior, c.attacker.player, c.defender.warrior, c.defender.player
        );
        rows.push(("last combat".into(), format!("combat {} ({state}): {who}", c.number)));
        let parts = std::iter::once(("", &c.first_combat)).chain(c.second_combat.iter().map(|d| ("second combat ", d)));
        for (part, d) in parts {
            rows.push((
                format!("{part}results"),
                list(d.results.iter().map(|r| format!("{} {}", r.warrior, r.outcome)).collect()),
            ));
            rows.push((
                format!("{part}status"),
                list(d.status.iter().map(|r| format!("{} {}", r.warrior, r.outcome)).collect()),
            ));
            rows.push((
                format!("{part}points awarded"),
                list(d.points.iter().map(|p| format!("{} {}", p.player, p.points)).collect()),
            ));
        }
        rows.push(("ended by".into(), c.ended_by.clone().unwrap_or_else(|| "-".into())));
    }
    rows
}
