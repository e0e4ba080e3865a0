//! GURPS: the combat turn sequence (`shared/rules/gurps-combat-turn-sequence.txt`).
//!
//! The text's procedure is the step table `STEPS` below: one row per part a
//! combat stands at, in the text's order, which the view, the refusals and
//! the moves read.
//!
//! | text | what the reducer does |
//! |---|---|
//! | "The GM decides when to start using the combat rules" | a judge (the GM) starts combat, naming every combatant with Basic Speed (in quarter points: 5.75 is 23), DX, side, and whether a PC |
//! | Turn Sequence | set at the start, never changed: descending Basic Speed |
//! | Tied Speeds | NPCs of one side: the GM states the order; with PCs involved: higher DX first; still tied: a roll made once, at the start (an event), fixes the order for the whole combat |
//! | Combat Turn Sequence | one turn per active character per second, in sequence; after everyone, the next second |
//! | Active Characters | knocked out, asleep etc.: not active, skipped (becoming inactive or active again is an event); Do Nothing keeps a character active |
//! | "Your Turn" | a turn is choosing a maneuver; it governs the character's options until its next turn |
//! | "drop out of combat time ... resume combat time" | both are events by the GM |
//!
//! # Maneuvers and what they allow until the character's next turn
//! Do Nothing, Move, Change Posture, Aim, Evaluate, Attack, Feint, All-Out
//! Attack, Move and Attack, All-Out Defense, Concentrate, Ready, Wait. The
//! reducer checks: attack rolls only on the attacker's own turn, after
//! Attack, All-Out Attack or Move and Attack; a feint roll only after Feint;
//! no active defense by a character whose maneuver is All-Out Attack.
//! Rolls and results are recorded as the table made them; the reducer does
//! not roll. Rolls come from the table on any turn in combat time: each
//! character's player records its character's rolls (an active defense is
//! rolled on the attacker's turn), the GM the NPCs' and anyone's; so on a
//! turn `may_act` lists the acting character's player, every other
//! character's player, and the GM.
//!
//! # Gaps in the text, and what the reducer does there
//! 1. **NPCs of different sides tied, with no PC among them**: the text
//!    covers NPCs of one side and ties with PCs; here the GM states the order.
//! 2. **Ties broken by a roll**: the higher roll goes first; equal rolls are
//!    refused (roll again).
//! 3. **Where combat time resumes**: at the turn where it stopped (the
//!    sequence "does not change during combat").
//! 4. **Wait**: the text does not say when a waiting character acts; the GM
//!    records an attack out of turn as a ruling (`resolve` `roll` by a judge
//!    with `ruling`).
//! 5. **The other maneuvers' limits** (Aim, Evaluate, ...) are in the
//!    chapters the text only names ("See Also"); the reducer enforces the
//!    All-Out Attack limit the issue and text give, and records the rest.
//! 6. **Rolls out of combat time** (before combat, after it, or dropped
//!    out of): the text has the GM resolve the action "through roleplaying
//!    and DX or skill rolls"; a `roll` is refused there, and the GM records
//!    the roll as a `determination`.

use std::collections::{BTreeMap, BTreeSet};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::event::{ActionType, Header, check_name};
use crate::kernel::{self, Refusal, StepRef, View, Violation, refuse};

mod board;
mod moves;
pub use board::{Board, Combatant as ChartLine, board, changes, maneuver_name, outcome};
pub use moves::moves;

pub const NAME: &str = "gurps";
pub const VERSION: u64 = 1;

// The text's procedure, `shared/rules/gurps-combat-turn-sequence.txt`, part
// by part in the text's order: a judge reads it beside the document. The
// text numbers nothing, so a row is headed as the text heads its part. Each
// phase of a combat stands at one row (`Phase::step`): the view, the
// refusals' rule texts and the moves read it, and every accepted action is
// checked against its row in debug builds (`State::step`).
//
// In a title, `{second}` and `{character}` are the turn's second and acting
// character; in a reference, `{title}` is the title.
#[rustfmt::skip]
const STEPS: &[Step] = &[
    Step {
        part: "Combat",
        title: "Combat (the GM decides when to start)",
        reference: "GURPS {title}",
        who: Who::Gm,
        may: &[(ActionType::Announce, &["combat"]), (ActionType::Resolve, &["determination"])],
        rule: "The GM decides when to start using the combat rules",
    },
    Step {
        part: "Combat Turn Sequence",
        title: "second {second}, {character}'s turn: choose a maneuver",
        reference: "GURPS Combat Turn Sequence, {title}",
        who: Who::Table,
        may: &[(ActionType::Announce, &["maneuver", "drop_out", "end_combat"]), (ActionType::Resolve, &["roll", "status", "determination"])],
        rule: "Combat Turn Sequence: each active character gets one turn per second, choosing a maneuver",
    },
    Step {
        part: "Combat Turn Sequence",
        title: "out of combat time (the GM may resume)",
        reference: "GURPS {title}",
        who: Who::Gm,
        may: &[(ActionType::Announce, &["resume", "end_combat"]), (ActionType::Resolve, &["status", "determination"])],
        rule: "The GM may drop out of combat time whenever dramatically appropriate, and resume combat time when noncombat action gives way to more fighting",
    },
    Step {
        part: "Tied Speeds",
        title: "Tied Speeds",
        reference: "GURPS {title}",
        who: Who::Gm,
        may: &[(ActionType::Resolve, &["tie", "status", "determination"]), (ActionType::Announce, &["end_combat"])],
        rule: "Tied Speeds: NPCs on the same side: the GM decides; with PCs, ties go to the highest DX; still tied, a roll at the start fixes the order",
    },
    Step {
        part: "\"Your Turn\"",
        title: "second {second}, {character}'s turn",
        reference: "GURPS Combat Turn Sequence, {title}",
        who: Who::Table,
        may: &[(ActionType::Pass, &[]), (ActionType::Resolve, &["roll", "status", "determination"]), (ActionType::Announce, &["drop_out", "end_combat"])],
        rule: "\"Your Turn\": a turn is the one-second period from choosing a maneuver until the next opportunity to select one",
    },
];

/// Gap 4, as a GM's refused roll says it.
const RULING_ROUTE: &str = r#"the GM records it as a ruling: the same roll with "ruling": "<why>" (a Wait triggered)"#;

// The rows by name, for the code that quotes one.
const COMBAT: &Step = &STEPS[0];
const TURN: &Step = &STEPS[1];
const COMBAT_TIME: &Step = &STEPS[2];
const TIED_SPEEDS: &Step = &STEPS[3];
const YOUR_TURN: &Step = &STEPS[4];

/// One part of the text's procedure.
struct Step {
    /// The text's heading for the part.
    part: &'static str,
    /// The view's title.
    title: &'static str,
    /// The view's reference.
    reference: &'static str,
    /// Who acts there.
    who: Who,
    /// What may be recorded there: each action type, in the view's order,
    /// with what it records (its `what`; a pass records nothing more).
    may: &'static [(ActionType, &'static [&'static str])],
    /// The rule a refusal quotes.
    rule: &'static str,
}

/// Who acts at a step: a role, whoever holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Who {
    /// The GM (every judge).
    Gm,
    /// The table on a turn: the acting character's player first, then every
    /// other character's player (rolls come from the table: an active
    /// defense is rolled on another character's turn), then the GM, who
    /// plays the NPCs and judges.
    Table,
}

impl Step {
    /// Whether an action of type `ty` recording `what` may be recorded here.
    fn allows(&self, ty: ActionType, what: &str) -> bool {
        self.may.iter().any(|(t, whats)| *t == ty && (whats.is_empty() || whats.contains(&what)))
    }

    /// The action types of the step, in its order.
    fn legal(&self) -> Vec<ActionType> {
        self.may.iter().map(|(t, _)| *t).collect()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Action {
    Announce(Announce),
    /// Ends the acting character's turn.
    Pass {},
    Resolve(Resolve),
}

impl Action {
    /// Its type and what it records, as a step's row lists them.
    fn kind(&self) -> (ActionType, &'static str) {
        match self {
            Action::Announce(a) => (
                ActionType::Announce,
                match a {
                    Announce::Combat { .. } => "combat",
                    Announce::Maneuver { .. } => "maneuver",
                    Announce::DropOut {} => "drop_out",
                    Announce::Resume {} => "resume",
                    Announce::EndCombat {} => "end_combat",
                },
            ),
            Action::Pass {} => (ActionType::Pass, ""),
            Action::Resolve(r) => (
                ActionType::Resolve,
                match r {
                    Resolve::Tie { .. } => "tie",
                    Resolve::Roll { .. } => "roll",
                    Resolve::Status { .. } => "status",
                    Resolve::Determination { .. } => "determination",
                },
            ),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "what", rename_all = "snake_case", deny_unknown_fields)]
pub enum Announce {
    /// The GM starts combat.
    Combat {
        combatants: Vec<Combatant>,
    },
    /// The acting character chooses its maneuver: its turn.
    Maneuver {
        maneuver: Maneuver,
    },
    /// The GM drops out of combat time, or resumes it.
    DropOut {},
    Resume {},
    /// The GM ends combat.
    EndCombat {},
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Combatant {
    pub name: String,
    /// Basic Speed in quarter points (5.75 is 23): no floating point in events.
    pub speed_quarters: i64,
    pub dx: i64,
    pub side: String,
    pub pc: bool,
    /// The seat that plays it; NPCs are the GM's (absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seat: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Maneuver {
    DoNothing,
    Move,
    ChangePosture,
    Aim,
    Evaluate,
    Attack,
    Feint,
    AllOutAttack,
    MoveAndAttack,
    AllOutDefense,
    Concentrate,
    Ready,
    Wait,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RollKind {
    Attack,
    Feint,
    /// Dodge, parry or block.
    ActiveDefense,
    Damage,
    Other,
}

impl Maneuver {
    /// Every maneuver, in the order the module docs list them.
    pub const ALL: [Maneuver; 13] = [
        Maneuver::DoNothing,
        Maneuver::Move,
        Maneuver::ChangePosture,
        Maneuver::Aim,
        Maneuver::Evaluate,
        Maneuver::Attack,
        Maneuver::Feint,
        Maneuver::AllOutAttack,
        Maneuver::MoveAndAttack,
        Maneuver::AllOutDefense,
        Maneuver::Concentrate,
        Maneuver::Ready,
        Maneuver::Wait,
    ];
}

impl RollKind {
    pub const ALL: [RollKind; 5] =
        [RollKind::Attack, RollKind::Feint, RollKind::ActiveDefense, RollKind::Damage, RollKind::Other];
}

/// The kind of roll in words, for the record: "active defense".
fn roll_name(kind: RollKind) -> &'static str {
    match kind {
        RollKind::Attack => "attack",
        RollKind::Feint => "feint",
        RollKind::ActiveDefense => "active defense",
        RollKind::Damage => "damage",
        RollKind::Other => "other",
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "what", rename_all = "snake_case", deny_unknown_fields)]
pub enum Resolve {
    /// The order of a tie group: by the GM's word, or by rolls made once at the start.
    Tie {
        order: Vec<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        rolls: Vec<TieRoll>,
    },
    /// A roll and its result, as the table made it.
    Roll {
        by: String,
        kind: RollKind,
        roll: i64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        target: Option<i64>,
        result: String,
        /// Set by the GM to record a roll the sequence would not allow (gap 4).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ruling: Option<String>,
    },
    /// A character becomes inactive (knocked out, asleep, ...) or active again.
    Status { combatant: String, active: bool, reason: String },
    /// Any other GM determination.
    Determination { text: String },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TieRoll {
    pub combatant: String,
    pub roll: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Character {
    pub speed_quarters: i64,
    pub dx: i64,
    pub side: String,
    pub pc: bool,
    pub seat: Option<String>,
    pub active: bool,
    /// The maneuver chosen on its last turn: it governs until its next turn.
    pub maneuver: Option<Maneuver>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "phase")]
pub enum Phase {
    /// Not in combat time (before combat, after it, or while the GM has dropped out).
    Out,
    /// Ties must be settled before the first turn: each group, highest Speed first.
    Ties,
    /// `index` into the sequence: that character's turn; `chosen` once it picked a maneuver.
    Turn { index: usize, chosen: bool },
    /// Dropped out of combat time; resumes at `index`.
    DroppedOut { index: usize },
}

impl Phase {
    /// Its row in the text's procedure ([`STEPS`]).
    fn step(&self) -> &'static Step {
        match self {
            Phase::Out => COMBAT,
            Phase::Turn { chosen: false, .. } => TURN,
            Phase::DroppedOut { .. } => COMBAT_TIME,
            Phase::Ties => TIED_SPEEDS,
            Phase::Turn { chosen: true, .. } => YOUR_TURN,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct State {
    pub seats: Vec<String>,
    pub judges: Vec<String>,
    pub characters: BTreeMap<String, Character>,
    /// The turn sequence: fixed at the start of combat.
    pub sequence: Vec<String>,
    /// Tie groups still to settle, in sequence order, each with how it is settled.
    pub ties: Vec<(Vec<String>, String)>,
    pub second: u64,
    pub phase: Phase,
    pub combats: u64,
    pub log: Vec<(u64, String)>,
}

pub fn open(header: &Header) -> Result<State, String> {
    if header.judges.is_empty() {
        return Err("GURPS needs a GM: name at least one judge".into());
    }
    if !header.options.is_empty() {
        return Err("GURPS takes no ruleset options".into());
    }
    Ok(State {
        seats: header.seat_ids(),
        judges: header.judges.clone(),
        characters: BTreeMap::new(),
        sequence: vec![],
        ties: vec![],
        second: 0,
        phase: Phase::Out,
        combats: 0,
        log: vec![],
    })
}

impl State {
    /// The state with the log summarised (count and last), so that a
    /// replay's comparison of two states costs the same at event 10 and at
    /// event 100,000 (`rules::Table::live_json`).
    pub fn live(&self) -> Live<'_> {
        Live {
            seats: &self.seats,
            judges: &self.judges,
            characters: &self.characters,
            sequence: &self.sequence,
            ties: &self.ties,
            second: self.second,
            phase: &self.phase,
            combats: self.combats,
            log: kernel::tail(&self.log),
        }
    }
}

/// [`State::live`]: the state with the log as a count and the newest entry.
#[derive(Serialize)]
pub struct Live<'a> {
    seats: &'a [String],
    judges: &'a [String],
    characters: &'a BTreeMap<String, Character>,
    sequence: &'a [String],
    ties: &'a [(Vec<String>, String)],
    second: u64,
    phase: &'a Phase,
    combats: u64,
    log: kernel::Tail<'a, (u64, String)>,
}

// What replay shows changed from one state to the next (`delta::Changes`),
// member by member.
crate::changes_by_member!(Live<'_> { characters, combats, judges, log, phase, seats, second, sequence, ties });

// The text's rules for actions that are not steps of it: the start's
// checks ("Turn Sequence"), rolls out of combat time, a character becoming
// inactive, and the GM's other determinations, recorded at any step.
const RULE_SEQ: &str =
    "Turn Sequence: set at the start of the fight and does not change; highest Basic Speed first, in descending order";
const RULE_OUT_OF_TIME: &str =
    "Out of combat time the GM resolves the action through roleplaying and DX or skill rolls";
const RULE_ACTIVE: &str = "Active Characters: knocked out, asleep, etc. is not active";
const RULE_GM: &str = "the GM's determinations";

impl State {
    pub fn apply(&self, seq: u64, actor: &str, action: &Value) -> Result<State, Violation> {
        kernel::apply(self, State::view, NAME, action, |s, a: &Action| s.step(seq, actor, a))
    }

    /// [`State::apply`] on this state: the step runs in place and a refusal
    /// is undone (see the [`kernel::Undo`] impl), so nothing is copied but
    /// the small rest of the state.
    pub fn apply_in_place(&mut self, seq: u64, actor: &str, action: &Value) -> Result<(), Violation> {
        kernel::apply_undoable(self, State::view, NAME, action, |s, a: &Action| s.step(seq, actor, a))
    }
}

/// The log only grows at its end: a refused step is undone by cutting it
/// back, and everything else is copied.
impl kernel::Undo for State {
    type Mark = (State, usize);
    fn mark(&self) -> Self::Mark {
        let State { seats, judges, characters, sequence, ties, second, phase, combats, log } = self;
        let rest = State {
            seats: seats.clone(),
            judges: judges.clone(),
            characters: characters.clone(),
            sequence: sequence.clone(),
            ties: ties.clone(),
            second: *second,
            phase: phase.clone(),
            combats: *combats,
            log: vec![],
        };
        (rest, log.len())
    }
    fn undo(&mut self, (rest, log): Self::Mark) {
        let mut l = std::mem::take(&mut self.log);
        l.truncate(log);
        *self = State { log: l, ..rest };
    }
}

impl State {
    fn is_gm(&self, actor: &str) -> bool {
        self.judges.iter().any(|j| j == actor)
    }

    /// Who plays a character: its seat, or the GM for NPCs.
    fn controls(&self, actor: &str, name: &str) -> bool {
        match &self.characters[name].seat {
            Some(seat) => seat == actor,
            None => self.is_gm(actor),
        }
    }

    /// The action at the step the combat stands at; in debug builds, an
    /// action accepted must be one its row lists (the table and the checks
    /// below cannot drift apart unnoticed).
    fn step(&mut self, seq: u64, actor: &str, action: &Action) -> Result<(), Refusal> {
        let row = self.phase.step();
        self.act(seq, actor, action)?;
        let (ty, what) = action.kind();
        debug_assert!(row.allows(ty, what), "GURPS {}: the row does not list {ty:?} {what}", row.part);
        Ok(())
    }

    fn act(&mut self, seq: u64, actor: &str, action: &Action) -> Result<(), Refusal> {
        // Each action has its own rule: a refusal names the rule it breaks, never another actor's next action.
        match action {
            Action::Announce(Announce::Combat { combatants }) => {
                self.may_start(actor)?;
                self.start(combatants)
            }
            Action::Resolve(Resolve::Tie { order, rolls }) => {
                self.may_settle_tie(actor)?;
                self.settle_tie(order, rolls)
            }
            Action::Resolve(Resolve::Status { combatant, active, reason }) => {
                self.may_set_status(actor)?;
                let Some(c) = self.characters.get_mut(combatant) else {
                    return refuse(RULE_ACTIVE, format!("{combatant} is not in this combat"));
                };
                c.active = *active;
                self.log.push((
                    seq,
                    format!("{combatant} {} ({reason})", if *active { "active again" } else { "inactive" }),
                ));
                // The acting character knocked out: its turn is over.
                if let Phase::Turn { index, .. } = self.phase
                    && !active
                    && self.sequence[index] == *combatant
                {
                    self.next_turn(index);
                }
                Ok(())
            }
            Action::Resolve(Resolve::Determination { text }) => {
                self.gm_only(actor, RULE_GM)?;
                check_name("determination", text).or_else(|m| refuse(RULE_GM, m))?;
                self.log.push((seq, text.clone()));
                Ok(())
            }
            Action::Announce(Announce::Maneuver { maneuver }) => {
                let index = self.may_choose_maneuver(actor, *maneuver)?;
                let who = self.sequence[index].clone();
                self.characters.get_mut(&who).expect("character").maneuver = Some(*maneuver);
                self.phase = Phase::Turn { index, chosen: true };
                Ok(())
            }
            Action::Pass {} => {
                let index = self.may_pass(actor)?;
                self.next_turn(index);
                Ok(())
            }
            Action::Resolve(Resolve::Roll { by, kind, roll, target, result, ruling }) => {
                self.may_roll(actor, by, *kind, ruling.is_some())?;
                let t = target.map(|t| format!(" vs {t}")).unwrap_or_default();
                self.log.push((seq, format!("{by}'s {} roll {roll}{t}: {result}", roll_name(*kind))));
                Ok(())
            }
            Action::Announce(Announce::DropOut {}) => {
                let index = self.may_drop_out(actor)?;
                self.phase = Phase::DroppedOut { index };
                Ok(())
            }
            Action::Announce(Announce::Resume {}) => {
                let index = self.may_resume(actor)?;
                // Gap 3: combat time resumes where it stopped.
                self.phase = Phase::Turn { index, chosen: false };
                if !self.characters[&self.sequence[index]].active {
                    self.next_turn(index);
                }
                Ok(())
            }
            Action::Announce(Announce::EndCombat {}) => {
                self.may_end_combat(actor)?;
                self.phase = Phase::Out;
                self.combats += 1;
                Ok(())
            }
        }
    }

    // Whether `actor` may record each action now, whatever its typed values:
    // the step checks these first, and the moves (`moves.rs`) offer an
    // action to exactly the actors these let through.

    /// The GM starts a combat when none is under way.
    fn may_start(&self, actor: &str) -> Result<(), Refusal> {
        self.gm_only(actor, COMBAT.rule)?;
        if self.phase != Phase::Out {
            return refuse(COMBAT.rule, "a combat is under way: the GM ends it (end_combat) before starting another");
        }
        Ok(())
    }

    /// The GM settles the first tie group still open (returned with how it is settled).
    fn may_settle_tie(&self, actor: &str) -> Result<&(Vec<String>, String), Refusal> {
        self.gm_only(actor, TIED_SPEEDS.rule)?;
        match self.phase {
            Phase::Ties => Ok(&self.ties[0]),
            Phase::Out => refuse(TIED_SPEEDS.rule, "no combat under way: ties are settled when the GM starts one"),
            _ => refuse(RULE_SEQ, "this combat's turn sequence was fixed at its start; its ties stay settled"),
        }
    }

    /// The GM makes a combatant inactive or active again, during a combat.
    fn may_set_status(&self, actor: &str) -> Result<(), Refusal> {
        self.gm_only(actor, RULE_ACTIVE)?;
        if self.phase == Phase::Out {
            return refuse(RULE_ACTIVE, "no combat under way");
        }
        Ok(())
    }

    /// The acting character's player chooses its maneuver, once a turn; the
    /// turn's index in the sequence.
    fn may_choose_maneuver(&self, actor: &str, maneuver: Maneuver) -> Result<usize, Refusal> {
        let (index, chosen) = self.turn_under_way()?;
        let who = &self.sequence[index];
        if !self.controls(actor, who) {
            return refuse(TURN.rule, format!("it is {who}'s turn"));
        }
        if chosen {
            let first = self.characters[who].maneuver.expect("chosen");
            return refuse(
                YOUR_TURN.rule,
                format!("{who} chose {first:?} this turn, not {maneuver:?}: one maneuver a turn; a pass ends it"),
            );
        }
        Ok(index)
    }

    /// The acting character's player, or the GM, ends its turn once it chose
    /// a maneuver; the turn's index in the sequence.
    fn may_pass(&self, actor: &str) -> Result<usize, Refusal> {
        let (index, chosen) = self.turn_under_way()?;
        let who = &self.sequence[index];
        if !self.controls(actor, who) && !self.is_gm(actor) {
            return refuse(TURN.rule, format!("{who}'s player or the GM ends {who}'s turn"));
        }
        if !chosen {
            return refuse(
                YOUR_TURN.rule,
                format!("{who} has not chosen a maneuver: a turn is choosing one (Do Nothing is a maneuver)"),
            );
        }
        Ok(index)
    }

    /// A roll of `kind` for `by`, in combat time (`ruling`: the GM records
    /// it by ruling, gap 4).
    fn may_roll(&self, actor: &str, by: &str, kind: RollKind, ruling: bool) -> Result<(), Refusal> {
        let (index, chosen) = match self.phase {
            Phase::Turn { index, chosen } => (index, chosen),
            Phase::Ties => {
                return refuse(TIED_SPEEDS.rule, "no turn has begun: the ties in the turn sequence are settled first");
            }
            Phase::Out | Phase::DroppedOut { .. } => {
                return refuse(
                    RULE_OUT_OF_TIME,
                    "not in combat time: the GM records a roll made outside it as a determination",
                );
            }
        };
        self.roll(actor, index, chosen, by, kind, ruling)
    }

    /// The GM drops out of combat time during a turn; the turn it resumes at.
    fn may_drop_out(&self, actor: &str) -> Result<usize, Refusal> {
        self.gm_only(actor, COMBAT_TIME.rule)?;
        match self.phase {
            Phase::Turn { index, .. } => Ok(index),
            Phase::DroppedOut { .. } => refuse(COMBAT_TIME.rule, "combat time is dropped out of already"),
            Phase::Ties => refuse(TIED_SPEEDS.rule, "combat time has not begun: the ties are settled first"),
            Phase::Out => refuse(COMBAT_TIME.rule, "no combat under way"),
        }
    }

    /// The GM resumes combat time dropped out of; the turn it resumes at.
    fn may_resume(&self, actor: &str) -> Result<usize, Refusal> {
        self.gm_only(actor, COMBAT_TIME.rule)?;
        match self.phase {
            Phase::DroppedOut { index } => Ok(index),
            Phase::Turn { .. } => refuse(COMBAT_TIME.rule, "combat time is running: there is nothing to resume"),
            Phase::Ties => refuse(TIED_SPEEDS.rule, "combat time has not begun: the ties are settled first"),
            Phase::Out => refuse(COMBAT_TIME.rule, "no combat under way: the GM starts one (announce combat)"),
        }
    }

    /// The GM ends a combat under way.
    fn may_end_combat(&self, actor: &str) -> Result<(), Refusal> {
        self.gm_only(actor, COMBAT.rule)?;
        if self.phase == Phase::Out {
            return refuse(COMBAT.rule, "no combat under way");
        }
        Ok(())
    }

    fn gm_only(&self, actor: &str, rule: &'static str) -> Result<(), Refusal> {
        if self.is_gm(actor) { Ok(()) } else { refuse(rule, format!("{actor} is not the GM")) }
    }

    /// The turn under way (index into the sequence, maneuver chosen), or why there is none.
    fn turn_under_way(&self) -> Result<(usize, bool), Refusal> {
        match self.phase {
            Phase::Turn { index, chosen } => Ok((index, chosen)),
            // No turn: the rule of the step the combat stands at.
            Phase::Ties => {
                refuse(self.phase.step().rule, "no turn has begun: the ties in the turn sequence are settled first")
            }
            Phase::DroppedOut { .. } => {
                refuse(self.phase.step().rule, "out of combat time: no turns until the GM resumes it")
            }
            Phase::Out => refuse(self.phase.step().rule, "no combat under way: no turns"),
        }
    }

    fn start(&mut self, combatants: &[Combatant]) -> Result<(), Refusal> {
        if combatants.len() < 2 {
            return refuse(RULE_SEQ, "a fight needs at least two combatants");
        }
        let mut characters = BTreeMap::new();
        for c in combatants {
            check_name("combatant", &c.name).or_else(|m| refuse(RULE_SEQ, m))?;
            check_name("side", &c.side).or_else(|m| refuse(RULE_SEQ, m))?;
            if c.speed_quarters <= 0 {
                return refuse(RULE_SEQ, format!("{}'s Basic Speed must be positive (in quarter points)", c.name));
            }
            if let Some(seat) = &c.seat
                && !self.seats.contains(seat)
            {
                return refuse(RULE_SEQ, format!("{seat} is not a seat"));
            }
            if c.pc && c.seat.is_none() {
                return refuse(RULE_SEQ, format!("{} is a PC: name the seat that plays it", c.name));
            }
            let ch = Character {
                speed_quarters: c.speed_quarters,
                dx: c.dx,
                side: c.side.clone(),
                pc: c.pc,
                seat: c.seat.clone(),
                active: true,
                maneuver: None,
            };
            if characters.insert(c.name.clone(), ch).is_some() {
                return refuse(RULE_SEQ, format!("{} is named twice", c.name));
            }
        }
        // Descending Basic Speed; then, where PCs are involved, higher DX first.
        let mut order: Vec<&Combatant> = combatants.iter().collect();
        order.sort_by_key(|c| std::cmp::Reverse(c.speed_quarters));
        let mut sequence: Vec<String> = vec![];
        let mut ties = vec![];
        for group in order.chunk_by(|a, b| a.speed_quarters == b.speed_quarters) {
            if group.len() == 1 {
                sequence.push(group[0].name.clone());
                continue;
            }
            if group.iter().any(|c| c.pc) {
                let mut by_dx: Vec<&&Combatant> = group.iter().collect();
                by_dx.sort_by_key(|c| std::cmp::Reverse(c.dx));
                for sub in by_dx.chunk_by(|a, b| a.dx == b.dx) {
                    sequence.push(sub[0].name.clone());
                    if sub.len() > 1 {
                        sequence.extend(sub[1..].iter().map(|c| c.name.clone()));
                        ties.push((sub.iter().map(|c| c.name.clone()).collect(), "roll".to_string()));
                    }
                }
            } else {
                sequence.extend(group.iter().map(|c| c.name.clone()));
                let sides: BTreeSet<&str> = group.iter().map(|c| c.side.as_str()).collect();
                let how = if sides.len() == 1 { "gm" } else { "gm (gap 1: NPCs of different sides)" };
                ties.push((group.iter().map(|c| c.name.clone()).collect(), how.to_string()));
            }
        }
        self.characters = characters;
        self.sequence = sequence;
        self.ties = ties;
        self.second = 1;
        self.phase = if self.ties.is_empty() { Phase::Turn { index: 0, chosen: false } } else { Phase::Ties };
        Ok(())
    }

    fn settle_tie(&mut self, order: &[String], rolls: &[TieRoll]) -> Result<(), Refusal> {
        let (group, how) = self.ties[0].clone();
        let mut a: Vec<&String> = order.iter().collect();
        a.sort();
        let mut b: Vec<&String> = group.iter().collect();
        b.sort();
        if a != b {
            return refuse(TIED_SPEEDS.rule, format!("order the tied group {}", group.join(", ")));
        }
        if how == "roll" {
            // Gap 2: the higher roll goes first; equal rolls do not decide.
            let roll_of = |n: &String| rolls.iter().find(|r| &r.combatant == n).map(|r| r.roll);
            if rolls.len() != group.len() || group.iter().any(|n| roll_of(n).is_none()) {
                return refuse(
                    TIED_SPEEDS.rule,
                    format!("PCs tied on Speed and DX: record one roll for each of {}", group.join(", ")),
                );
            }
            let values: BTreeSet<i64> = rolls.iter().map(|r| r.roll).collect();
            if values.len() != rolls.len() {
                return refuse(TIED_SPEEDS.rule, "equal rolls do not decide: roll again (gap 2)");
            }
            let mut by_roll = group.clone();
            by_roll.sort_by_key(|n| std::cmp::Reverse(roll_of(n)));
            if by_roll != order {
                return refuse(TIED_SPEEDS.rule, format!("the rolls put them in the order {}", by_roll.join(", ")));
            }
        } else if !rolls.is_empty() {
            return refuse(TIED_SPEEDS.rule, "the GM simply decides this tie: no rolls");
        }
        // Put the group in its place in the sequence, in the settled order.
        let start = self.sequence.iter().position(|n| group.contains(n)).expect("group in sequence");
        for (i, n) in order.iter().enumerate() {
            self.sequence[start + i] = n.clone();
        }
        self.ties.remove(0);
        if self.ties.is_empty() {
            self.phase = Phase::Turn { index: 0, chosen: false };
            if !self.characters[&self.sequence[0]].active {
                self.next_turn(0);
            }
        }
        Ok(())
    }

    /// The next active character in sequence; after the last, the next second.
    fn next_turn(&mut self, from: usize) {
        let n = self.sequence.len();
        for p in from + 1..=from + n {
            let i = p % n;
            if self.characters[&self.sequence[i]].active {
                if p >= n {
                    // Everyone has had a turn: one second has passed.
                    self.second += 1;
                }
                self.phase = Phase::Turn { index: i, chosen: false };
                return;
            }
        }
        // No one is active: combat time waits for the GM.
        self.phase = Phase::DroppedOut { index: from };
    }

    fn roll(
        &self,
        actor: &str,
        index: usize,
        chosen: bool,
        by: &str,
        kind: RollKind,
        ruling: bool,
    ) -> Result<(), Refusal> {
        let Some(c) = self.characters.get(by) else { return refuse(TURN.rule, format!("{by} is not in this combat")) };
        if ruling {
            return if self.is_gm(actor) {
                Ok(())
            } else {
                refuse("gap 4 (module docs)", "only the GM records a ruling")
            };
        }
        if !self.controls(actor, by) && !self.is_gm(actor) {
            return refuse(TURN.rule, format!("{actor} does not play {by}"));
        }
        // What the sequence does not allow, the GM may still record by
        // ruling (gap 4): the GM's refusal says how.
        self.sequence_allows(index, chosen, c, by, kind).map_err(|(rule, message)| {
            if self.is_gm(actor) { (rule, format!("{message}; {RULING_ROUTE}")) } else { (rule, message) }
        })
    }

    /// Whether the turn sequence and `by`'s maneuver allow a roll of `kind` now.
    fn sequence_allows(
        &self,
        index: usize,
        chosen: bool,
        c: &Character,
        by: &str,
        kind: RollKind,
    ) -> Result<(), Refusal> {
        let acting = self.sequence[index] == by;
        match kind {
            RollKind::Attack | RollKind::Feint => {
                if !acting || !chosen {
                    return refuse(
                        "\"Your Turn\": a character acts on its own turn, after choosing a maneuver",
                        format!(
                            "it is {}'s turn{}",
                            self.sequence[index],
                            if chosen { "" } else { " and no maneuver is chosen yet" }
                        ),
                    );
                }
                let ok = match kind {
                    RollKind::Attack => {
                        matches!(c.maneuver, Some(Maneuver::Attack | Maneuver::AllOutAttack | Maneuver::MoveAndAttack))
                    }
                    _ => c.maneuver == Some(Maneuver::Feint),
                };
                if !ok {
                    return refuse(
                        "the maneuver governs the character's options until its next turn",
                        format!("{by} chose {:?}, which does not allow a {kind:?} roll", c.maneuver.expect("chosen")),
                    );
                }
            }
            RollKind::ActiveDefense => {
                if !c.active {
                    return refuse("Active Characters", format!("{by} is not active"));
                }
                if c.maneuver == Some(Maneuver::AllOutAttack) {
                    return refuse(
                        "All-Out Attack: no active defense until the character's next turn",
                        format!("{by} made an All-Out Attack"),
                    );
                }
            }
            RollKind::Damage | RollKind::Other => {}
        }
        Ok(())
    }

    pub fn view(&self) -> View {
        let row = self.phase.step();
        // On a turn: its second (the view's number) and the acting character.
        let acting = match self.phase {
            Phase::Turn { index, .. } => Some(&self.sequence[index]),
            _ => None,
        };
        let number = if acting.is_some() { self.second.to_string() } else { String::new() };
        let title = row.title.replace("{second}", &number).replace("{character}", acting.map_or("", |c| c.as_str()));
        let may_act = match row.who {
            Who::Gm => self.judges.clone(),
            Who::Table => {
                let mut may: Vec<String> = vec![];
                let players = acting.into_iter().chain(&self.sequence).filter_map(|n| self.characters[n].seat.as_ref());
                for actor in players.chain(&self.judges) {
                    if !may.contains(actor) {
                        may.push(actor.clone());
                    }
                }
                may
            }
        };
        let awaiting_ruling = match self.phase {
            Phase::Ties => {
                let (group, how) = &self.ties[0];
                Some(format!(
                    "{} tie ({how}): {}",
                    if how == "roll" { "a roll settles the" } else { "the GM orders the" },
                    group.join(", ")
                ))
            }
            _ => None,
        };
        View {
            step: StepRef { number, reference: row.reference.replace("{title}", &title), title },
            may_act,
            legal: row.legal(),
            awaiting_ruling,
        }
    }
}
