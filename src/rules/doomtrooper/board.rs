//! The board: what a judge would draw on paper for the combat, in the
//! text's words and the players' names. A pure function of the state (and
//! the header, for names); `state --json` shows it under `board`, the CLI
//! and the replay page draw it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Combat, Determined, Fate, Order, Play, State};
use crate::event::Header;

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
    /// The battle tactic that stands ("Fight"), if announced.
    pub battle_tactic: Option<String>,
    /// The warzone announced: its name, "none", or absent if not yet announced.
    pub warzone: Option<String>,
    /// "simultaneous", or who strikes first by name.
    pub strike_order: String,
    /// Every effect played in this combat, in record order.
    pub effects: Vec<EffectLine>,
    /// Equipment announced as used, by player.
    pub equipment: Vec<Equipment>,
    /// Steps 2-15 were repeated this many times because the combatants changed.
    pub repeats: u64,
    /// The combat-ending card that ended the combat ("Smoke Bomb (seq 20)").
    pub ended_by: Option<String>,
    /// Combat ratings, results, status and points: the whole combat, or the
    /// first combat of a non-simultaneous breakdown.
    pub first_combat: Determination,
    /// The second combat of a non-simultaneous breakdown.
    pub second_combat: Option<Determination>,
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
    let combat = state.combat.as_ref().map(|c| (c, false)).or(state.finished.last().map(|c| (&**c, true)));
    Board {
        points: state.seats.iter().map(|s| Points { player: header.name_of(s), points: state.points[s] }).collect(),
        combat: combat.map(|(c, finished)| combat_board(c, finished, header)),
        combats_finished: state.finished.len() as u64,
    }
}

fn combat_board(c: &Combat, finished: bool, header: &Header) -> CombatBoard {
    let standing = c.effects.standing();
    let effects = c
        .effects
        .effects
        .iter()
        .map(|e| {
            let countered_by =
                c.effects.effects.iter().find(|k| k.counters == Some(e.seq) && standing.contains(&k.seq)).map(|k| {
                    format!(
                        "{} (seq {}) by {}",
                        k.card.as_deref().unwrap_or("a counter"),
                        k.seq,
                        header.name_of(&k.seat)
                    )
                });
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
        battle_tactic: c.battle_tactic.as_ref().map(|(_, t)| t.clone()),
        warzone: c.warzone.as_ref().map(|(_, w)| w.clone().unwrap_or_else(|| "none".into())),
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
        ("battle_tactic", _) => c.battle_tactic.as_ref().filter(|(s, _)| *s == seq).map(|(_, t)| t.clone()),
        ("warzone", _) => {
            c.warzone.as_ref().filter(|(s, _)| *s == seq).map(|(_, w)| w.clone().unwrap_or("none".into()))
        }
        _ => None,
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
