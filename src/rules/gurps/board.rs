//! The board: what a GM would draw on paper for a GURPS combat, in the
//! text's words and the players' names: the turn sequence (the text's
//! "Sequence Chart") with whose turn it is, the second, each character's
//! maneuver and the limits it puts in force until its next turn, and who
//! is active. A pure function of the state (and the header, for names);
//! `state --json` shows it under `board`, and `replay` says what changed in
//! its words.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Maneuver, Phase, State};
use crate::event::Header;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Board {
    /// "in combat time", "tied speeds to settle", "out of combat time (the
    /// GM dropped out)", "out of combat time: no one is active (the GM may
    /// resume)" or "not in combat".
    pub time: String,
    /// The combat under way, or between combats the last one ended; absent before the first.
    pub combat: Option<CombatBoard>,
    /// How many combats have ended.
    pub combats_ended: u64,
    /// The newest entry of the GM's record (a roll, a character becoming
    /// inactive or active, a determination).
    pub latest: Option<Entry>,
    /// How many entries the record holds.
    pub entries: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CombatBoard {
    pub number: u64,
    /// The combat is over (this is the last one ended).
    pub ended: bool,
    /// The second under way (1 at the start).
    pub second: u64,
    /// Whose turn it is: "Wren, played by Bob (p2)"; absent when no turn is under way.
    pub turn: Option<String>,
    /// The acting character has chosen this turn's maneuver (a pass ends the turn).
    pub maneuver_chosen: bool,
    /// After the GM dropped out of combat time: whose turn it resumes at (gap 3).
    pub resumes_at: Option<String>,
    /// Tied Speeds still to settle before the first turn, in sequence order.
    pub ties: Vec<Tie>,
    /// The turn sequence, fixed at the start: every combatant in order.
    pub sequence: Vec<Combatant>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Tie {
    pub combatants: Vec<String>,
    /// "a roll at the start settles it" (PCs tied on Speed and DX) or "the GM decides".
    pub settled_by: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Combatant {
    pub name: String,
    /// Who plays it: "Alice (p1)", or "the GM" for an NPC.
    pub player: String,
    pub side: String,
    pub pc: bool,
    /// Basic Speed as written on the sheet: "5.75".
    pub basic_speed: String,
    pub dx: i64,
    /// Active characters take turns; one knocked out, asleep, etc. is skipped.
    pub active: bool,
    /// It is this character's turn.
    pub acting: bool,
    /// The maneuver chosen on its last turn ("All-Out Attack"): it governs
    /// the character's options until its next turn.
    pub maneuver: Option<String>,
    /// What that maneuver allows and forbids, as the reducer enforces it: on
    /// the turn it is chosen, which rolls; until the character's next turn,
    /// All-Out Attack's "no active defense" (gap 5: the other limits are in
    /// chapters the text only names).
    pub limits: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Entry {
    pub seq: u64,
    pub text: String,
}

/// The maneuver in the text's words.
pub fn maneuver_name(m: Maneuver) -> &'static str {
    match m {
        Maneuver::DoNothing => "Do Nothing",
        Maneuver::Move => "Move",
        Maneuver::ChangePosture => "Change Posture",
        Maneuver::Aim => "Aim",
        Maneuver::Evaluate => "Evaluate",
        Maneuver::Attack => "Attack",
        Maneuver::Feint => "Feint",
        Maneuver::AllOutAttack => "All-Out Attack",
        Maneuver::MoveAndAttack => "Move and Attack",
        Maneuver::AllOutDefense => "All-Out Defense",
        Maneuver::Concentrate => "Concentrate",
        Maneuver::Ready => "Ready",
        Maneuver::Wait => "Wait",
    }
}

/// What the reducer lets a character do under a maneuver (see
/// `State::roll`): on the turn it was chosen, which rolls it allows; after
/// that, until the character's next turn, only All-Out Attack's limit.
fn limits(m: Maneuver, this_turn: bool) -> Option<&'static str> {
    match (m, this_turn) {
        (Maneuver::Attack | Maneuver::MoveAndAttack, true) => Some("may roll to attack this turn"),
        (Maneuver::AllOutAttack, true) => Some("may roll to attack this turn; no active defense until its next turn"),
        (Maneuver::Feint, true) => Some("may roll to feint this turn"),
        (_, true) => Some("no attack or feint roll this turn"),
        (Maneuver::AllOutAttack, false) => Some("no active defense until its next turn"),
        (_, false) => None,
    }
}

/// Basic Speed from quarter points: 23 is "5.75".
fn speed(quarters: i64) -> String {
    format!("{}.{:02}", quarters / 4, (quarters % 4) * 25)
}

pub fn board(state: &State, header: &Header) -> Board {
    let time = match state.phase {
        Phase::Turn { .. } => "in combat time",
        Phase::Ties => "tied speeds to settle",
        // The reducer stops combat time too when no one is left active.
        Phase::DroppedOut { .. } if state.characters.values().all(|c| !c.active) => {
            "out of combat time: no one is active (the GM may resume)"
        }
        Phase::DroppedOut { .. } => "out of combat time (the GM dropped out)",
        Phase::Out => "not in combat",
    };
    // The characters stay in the state after a combat ends: the last one's chart.
    let combat = (!state.sequence.is_empty()).then(|| {
        let ended = state.phase == Phase::Out;
        let (acting, chosen) = match state.phase {
            Phase::Turn { index, chosen } => (Some(index), chosen),
            _ => (None, false),
        };
        let played_by = |name: &str| match &state.characters[name].seat {
            Some(seat) => header.name_of(seat),
            None => "the GM".to_string(),
        };
        CombatBoard {
            number: if ended { state.combats } else { state.combats + 1 },
            ended,
            second: state.second,
            turn: acting.map(|i| format!("{}, played by {}", state.sequence[i], played_by(&state.sequence[i]))),
            maneuver_chosen: chosen,
            resumes_at: match state.phase {
                Phase::DroppedOut { index } => Some(state.sequence[index].clone()),
                _ => None,
            },
            ties: state
                .ties
                .iter()
                .map(|(group, how)| Tie {
                    combatants: group.clone(),
                    settled_by: if how == "roll" {
                        "a roll at the start settles it".into()
                    } else {
                        // "gm", or "gm (gap 1: ...)": the GM decides either way.
                        how.replacen("gm", "the GM decides", 1)
                    },
                })
                .collect(),
            sequence: state
                .sequence
                .iter()
                .enumerate()
                .map(|(i, name)| {
                    let c = &state.characters[name];
                    Combatant {
                        name: name.clone(),
                        player: played_by(name),
                        side: c.side.clone(),
                        pc: c.pc,
                        basic_speed: speed(c.speed_quarters),
                        dx: c.dx,
                        active: c.active,
                        acting: acting == Some(i),
                        maneuver: c.maneuver.map(|m| maneuver_name(m).to_string()),
                        // Out of combat no maneuver limits anything: the rolls are the GM's determinations.
                        limits: c
                            .maneuver
                            .filter(|_| !ended)
                            .and_then(|m| limits(m, acting == Some(i) && chosen))
                            .map(String::from),
                    }
                })
                .collect(),
        }
    });
    Board {
        time: time.to_string(),
        combat,
        combats_ended: state.combats,
        latest: state.log.last().map(|(seq, text)| Entry { seq: *seq, text: text.clone() }),
        entries: state.log.len() as u64,
    }
}

/// What changed from `before` to `after`, in the board's words: one
/// sentence per thing a GM would write down ("Sir Roland chooses All-Out
/// Attack: ...", "second 2 begins", "the turn sequence is Wren, Sir
/// Roland, Bandit").
pub fn changes(before: &Board, after: &Board) -> Vec<String> {
    let mut said = Vec::new();
    // The GM's record entry first: what happened, then what it moved on (a
    // character knocked out on its turn ends it). A character becoming
    // inactive or active again is such an entry: said there.
    if let Some(e) = &after.latest
        && before.latest.as_ref().is_none_or(|b| b.seq != e.seq)
    {
        said.push(format!("recorded: {}", e.text));
    }
    let order = |c: &CombatBoard| c.sequence.iter().map(|x| x.name.clone()).collect::<Vec<_>>().join(", ");
    match (&before.combat, &after.combat) {
        (Some(b), Some(a)) if b.number == a.number => {
            if order(b) != order(a) {
                said.push(format!("tie settled: the turn sequence is {}", order(a)));
            }
            if a.second > b.second {
                said.push(format!("second {} begins", a.second));
            }
            if let Some(c) = a.sequence.iter().find(|c| c.acting)
                && a.maneuver_chosen
                && !b.maneuver_chosen
            {
                let m = c.maneuver.as_deref().unwrap_or_default();
                let limits = c.limits.as_deref().map(|l| format!(": {l}")).unwrap_or_default();
                said.push(format!("{} chooses {m}{limits}", c.name));
            }
            match (&b.resumes_at, &a.resumes_at) {
                (None, Some(_)) if a.sequence.iter().all(|c| !c.active) => {
                    said.push("no one is active: combat time waits for the GM".into())
                }
                (None, Some(at)) => said.push(format!("the GM drops out of combat time (it resumes at {at}'s turn)")),
                (Some(_), None) if !a.ended => said.push("the GM resumes combat time".into()),
                _ => {}
            }
            if a.ended && !b.ended {
                said.push(format!("combat {} ends", a.number));
            }
        }
        (_, Some(a)) if !a.ended => {
            let speeds: Vec<String> = a.sequence.iter().map(|c| format!("{} {}", c.name, c.basic_speed)).collect();
            // Who rolls is said here once, not in every turn's step.
            said.push(format!(
                "combat {} begins: the turn sequence by Basic Speed is {}; rolls come from the table: each \
                 character's player, the GM for NPCs",
                a.number,
                speeds.join(", ")
            ));
            for t in &a.ties {
                said.push(format!("tied: {}: {}", t.combatants.join(", "), t.settled_by));
            }
        }
        _ => {}
    }
    said
}

/// The outcome as a judge compares two records of it: (label, value) rows,
/// who is out of the fight first, then where the combat stands and each
/// character's maneuver.
pub fn outcome(b: &Board) -> Vec<(String, String)> {
    let list = |v: Vec<String>| if v.is_empty() { "-".to_string() } else { v.join(", ") };
    let mut rows = vec![];
    if let Some(c) = &b.combat {
        rows.push((
            "inactive".to_string(),
            list(c.sequence.iter().filter(|x| !x.active).map(|x| x.name.clone()).collect()),
        ));
    }
    rows.push(("combats ended".into(), b.combats_ended.to_string()));
    rows.push(("time".into(), b.time.clone()));
    if let Some(c) = &b.combat {
        rows.push(("turn sequence".into(), list(c.sequence.iter().map(|x| x.name.clone()).collect())));
        rows.push(("second".into(), c.second.to_string()));
        rows.push(("turn".into(), c.turn.clone().unwrap_or_else(|| "-".into())));
        for x in &c.sequence {
            rows.push((format!("maneuver of {}", x.name), x.maneuver.clone().unwrap_or_else(|| "-".into())));
        }
    }
    rows.push(("latest entry".into(), b.latest.as_ref().map_or("-".into(), |e| e.text.clone())));
    rows
}
