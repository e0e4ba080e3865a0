//! WTactics combat (`shared/rules/wtactics-combat.rst`).
//!
//! The text's four parts, as the reducer walks them (row by row, with who
//! acts there and the rule its refusals quote, in the step table `STEPS`):
//!
//! | part | what happens | who acts |
//! |---|---|---|
//! | I   | the active player announces *all* attackers, marking them; then a Response phase: passive, active, ... one Event or one Ability per opportunity, until both pass in a row | active, then both |
//! | II  | the defending player defends, or lets the attacks through (then loses influence equal to the attackers' total damage) | passive |
//! | III | defenders: any number, to any attackers, each against exactly one attacker, shown visibly | passive |
//! | IV  | combats one attacker at a time: the attacking player picks the first, the defending player the next, alternating; each combat has Response phases, then resolves: attacker ATK > defender DEF kills the defender; defender ATK >= attacker DEF kills the attacker; then dead creatures, the combat's Events and the Enchantments on dead creatures go to the discard piles | both |
//!
//! # What the reducer checks
//! Only unmarked, living creatures of the right player attack or defend; a
//! creature is never both attacker and defender; every defender blocks
//! exactly one attacker; whose pick it is; whose Response opportunity it is;
//! the influence lost to undefended attacks is their total; a recorded
//! combat outcome is the one the text's comparison gives (a wrong one is
//! refused); when no Event or Ability was played in the attack, the values
//! at resolution are the creatures' own, and so is an undefended attacker's
//! damage (its ATK).
//!
//! # Gaps in the text, and what the reducer does there
//! 1. **Several defenders on one attacker**: the text compares one ATK with
//!    one DEF. The reducer stops after the Response phases and waits for a
//!    judge's ruling (`resolve` `combat` by a judge, naming who died).
//! 2. **Attackers left undefended while others are defended**: II covers
//!    only "not defending" at all. The reducer waits for a judge's ruling
//!    on the influence lost (`resolve` `unblocked` by a judge).
//! 3. **Who opens an individual combat's Response phases**: not said; the
//!    reducer uses the order of part I (the passive player first).
//! 4. **When creatures become unmarked**: not said; the owner records it
//!    (`resolve` `unmark`) between attacks. Defenders are not marked (the
//!    text marks attackers only), but must be unmarked to defend.
//! 5. **Effects on ATK and DEF**: the text says "take into account all
//!    effects" but gives no effects; the table records the values it
//!    determined, and the reducer compares them. The damage an undefended
//!    attacker deals (II) is not defined either; the reducer takes it to be
//!    the attacker's ATK, as IV compares ATK, so with no Event or Ability
//!    played in the attack it must be the creature's own ATK. Events played
//!    in part I's Response phase are discarded when the whole attack is
//!    over; those played in an individual combat when that combat is over.
//! 6. **Who records the influence lost and the values**: either player or a
//!    judge. An undefended attack's damage with an Event or Ability played
//!    is the exception. The text says who deals it (the attackers, II) and
//!    who loses influence equal to it (the defending player), and that all
//!    effects count (IV), but not who states the amount; and each player's
//!    statement alone would settle what benefits that player (the defending
//!    player its own loss, the attacking player the damage its attackers
//!    deal). So neither is the text's alone: one player's record is a claim
//!    that stands once the other player confirms it (`resolve` `confirm`),
//!    or a judge records the damage (a judge's record stands at once).
//!    Nothing is lost before. With no Event or Ability played the damage is
//!    the attackers' own ATK (gap 5): either player records it, with nothing
//!    to claim. Games recorded under version 1, before this, fold as they
//!    were (a player's record stood alone).
//! 7. **Turns**: the text has the active player announce "all attackers that
//!    will fight that turn" but does not say where a turn begins or who
//!    takes the next one. The table records it: `announce` `turn` by a
//!    player, between attacks, begins that player's turn (the reducer does
//!    not assume the players alternate). The first attackers announcement
//!    of a game needs no turn action: it begins turn 1 with its announcer
//!    as the active player. Within a turn only the active player announces
//!    attackers, and only once; attackers announced again are refused until
//!    the next turn is announced.

use std::collections::{BTreeMap, BTreeSet};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::event::{ActionType, Header, check_name};
use crate::kernel::{self, Refusal, StepRef, View, Violation, Window, refuse};

mod board;
mod moves;
pub use board::{Board, Fighter, board, changes, fighter, outcome, result_words};
pub use moves::moves;

pub const NAME: &str = "wtactics";
/// Version 2: a player's record of undefended damage with an effect played
/// waits for the other player's confirmation, or a judge's record (gap 6).
pub const VERSION: u64 = 2;
/// Version 1 games fold as they were recorded.
pub const FOLDS: &[u64] = &[1, 2];

// ---------------------------------------------------------------------------
// The step table: the text's procedure ("Combat sequence", parts I to IV of
// `shared/rules/wtactics-combat.rst`), in its order, with the reducer's own
// steps where the text is silent (the gaps above). The view's step number,
// title, who may act and what is legal, and the rule a refusal quotes, are
// read from here: a judge holds it beside the document.
// ---------------------------------------------------------------------------

/// Who acts at a step: a role, never a seat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Who {
    /// Either player: between attacks one begins a turn (gap 7), the active
    /// player announces the attackers (I), an owner unmarks its creatures (gap 4).
    Players,
    /// The player with the Response opportunity: the passive player first,
    /// then the players alternate (I; the same in IV, gap 3).
    Opportunity,
    /// The defending (passive) player.
    Defending,
    /// Whose pick it is: the attacking player first, then the defending
    /// player, alternating.
    Picker,
    /// Either player or a judge (gap 6).
    Recorder,
    /// The player who did not record the claim under way, or a judge (gap 6).
    Confirmer,
    /// A judge: the text is silent.
    Judge,
}

/// The reducer's name for each row: one per [`Phase`], and III's defenders
/// (declared with II's choice to defend).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Row {
    Attackers,
    Responses,
    Defend,
    Undefended,
    Confirm,
    Defenders,
    UnblockedRuling,
    NextCombat,
    CombatResponses,
    Resolution,
    CombatRuling,
    NextTurn,
}

struct Step {
    row: Row,
    /// The part as the text numbers it.
    part: &'static str,
    /// What happens there (the view's title).
    title: &'static str,
    who: Who,
    /// What may be recorded there (the view's legal types).
    may: &'static [ActionType],
    /// The rule, as refusals at this step quote it.
    rule: &'static str,
}

const fn step(
    row: Row,
    part: &'static str,
    title: &'static str,
    who: Who,
    may: &'static [ActionType],
    rule: &'static str,
) -> Step {
    Step { row, part, title, who, may, rule }
}

impl Step {
    /// Where the rule is ("II", "gap 2 (module docs)"), for a refusal that
    /// quotes no more than that.
    fn place(&self) -> &'static str {
        self.rule.split_once(':').map_or(self.rule, |(place, _)| place)
    }
}

use ActionType::{Announce as ANNOUNCE, Pass as PASS, Play as PLAY, Resolve as RESOLVE};
use Who::{Confirmer, Defending, Judge, Opportunity, Picker, Players, Recorder};

/// "Combat sequence", I to IV, and back to I when a turn's attacks are over.
#[rustfmt::skip]
const STEPS: &[Step] = &[
    step(Row::Attackers,       "I",   "announce attackers",                         Players,     &[ANNOUNCE, RESOLVE], "I: only unmarked creatures may attack; the active player announces all attackers at once, marking them"),
    step(Row::Responses,       "I",   "Response phase",                             Opportunity, &[PLAY, PASS],        "Response phase: one Event card or one Ability (not both); the players alternate until both pass"),
    step(Row::Defend,          "II",  "defend or allow the attacks",                Defending,   &[ANNOUNCE],          "II: the defending player may choose to defend or allow the attacks"),
    step(Row::Undefended,      "II",  "undefended: influence lost",                 Recorder,    &[RESOLVE],           "II: the defending player loses influence equal to the total amount of damage dealt by the attackers"),
    step(Row::Confirm,         "II",  "undefended: the other player confirms",      Confirmer,   &[RESOLVE],           "gap 6 (module docs): with an Event or Ability played, a player's record of the damage stands once the other player confirms it, or a judge records it"),
    step(Row::Defenders,       "III", "assign defenders",                           Defending,   &[ANNOUNCE],          "III: defenders to any attackers; every defender can only defend against one attacker; a creature is never both attacker and defender"),
    step(Row::UnblockedRuling, "III", "attackers left undefended",                  Judge,       &[RESOLVE],           "gap 2 (module docs): the text is silent; a judge rules"),
    step(Row::NextCombat,      "IV",  "choose the next combat",                     Picker,      &[ANNOUNCE],          "IV: the attacking player chooses which combat resolves first, then the defending player the next, alternating"),
    step(Row::CombatResponses, "IV",  "Response phase of the combat",               Opportunity, &[PLAY, PASS],        "Response phase: one Event card or one Ability (not both); the players alternate until both pass"),
    step(Row::Resolution,      "IV",  "resolve the combat",                         Recorder,    &[RESOLVE],           "IV: Attacker ATK higher than Defender DEF: the Defender dies; Defender ATK equal to or higher than Attacker DEF: the Attacker dies"),
    step(Row::CombatRuling,    "IV",  "resolve the combat",                         Judge,       &[RESOLVE],           "gap 1 (module docs): how several defenders strike or are struck is not in the text; a judge rules"),
    step(Row::NextTurn,        "I",   "its attacks are over; the next turn begins", Players,     &[ANNOUNCE, RESOLVE], "gap 7 (module docs): a turn begins with the active player's announce turn, between attacks"),
];

// Each row sits at its `Row`'s index, so that finding it is free.
const _: () = {
    let mut i = 0;
    while i < STEPS.len() {
        assert!(STEPS[i].row as usize == i, "STEPS is in Row's order");
        i += 1;
    }
};

fn row(row: Row) -> &'static Step {
    &STEPS[row as usize]
}

// Sentences single checks quote, beside their step's rule: the General
// section's, which hold at every step, and one bullet of a part.
const RULE_ACTIVE: &str = "The active player is the only one that can perform attacks during his/her Attack/Move-phase";
const RULE_UNMARKED: &str = "Only unmarked creatures may attack or defend";
const RULE_ALL_ATTACKERS: &str = "I: the active player announces all attackers that will fight this turn, at once";
const RULE_UNMARK: &str = "gap 4 (module docs): the owner records that its creatures are unmarked";
const RULE_DAMAGE: &str = "II: influence lost equal to the total damage dealt by the attackers; an attacker deals its ATK, all effects taken into account (gap 5, module docs)";
const RULE_EFFECTS: &str = "IV: take into account all effects";

// ---------------------------------------------------------------------------
// Payloads.
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Action {
    Announce(Announce),
    /// A Response: one Event card or one Ability.
    Play {
        kind: PlayKind,
        card: String,
    },
    Pass {},
    Resolve(Resolve),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PlayKind {
    Event,
    Ability,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "what", rename_all = "snake_case", deny_unknown_fields)]
pub enum Announce {
    /// Gap 7: the actor's turn begins; it is the active player.
    Turn {},
    /// I: all attackers for the turn, at once (the actor is the active player).
    Attackers { attackers: Vec<CreatureSpec> },
    /// II/III: the defenders and whom each blocks; an empty list lets the attacks through.
    Defenders { blocks: Vec<Block> },
    /// IV: the combat (by its attacker) to resolve next.
    NextCombat { attacker: String },
}

/// A creature as the table shows it. Its first mention gives ATK and DEF.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreatureSpec {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub atk: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub def: Option<i64>,
    /// Enchantments attached to it (they follow it to the discard pile).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub enchantments: Vec<Enchantment>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Enchantment {
    pub card: String,
    /// The seat whose discard pile it goes to.
    pub owner: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Block {
    pub defender: CreatureSpec,
    /// The attacker it defends against.
    pub attacker: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "what", rename_all = "snake_case", deny_unknown_fields)]
pub enum Resolve {
    /// II: attacks let through: each attacker's damage, and the influence lost (their total).
    Undefended { damage: Vec<Damage>, influence_lost: i64 },
    /// Gap 6: the other player confirms the undefended damage a player recorded.
    Confirm {},
    /// Judge's ruling (gap 2): influence lost to attackers left undefended.
    Unblocked { influence_lost: i64 },
    /// IV: the values with all effects counted, and who died.
    Combat { attacker: Values, defenders: Vec<Named>, dead: Vec<String> },
    /// Gap 4: the owner's creatures become unmarked.
    Unmark { creatures: Vec<String> },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Damage {
    pub attacker: String,
    pub damage: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Values {
    pub atk: i64,
    pub def: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Named {
    pub name: String,
    pub atk: i64,
    pub def: i64,
}

// ---------------------------------------------------------------------------
// State.
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Creature {
    pub owner: String,
    pub atk: i64,
    pub def: i64,
    pub marked: bool,
    pub dead: bool,
    pub enchantments: Vec<Enchantment>,
}

impl Creature {
    /// `owner`'s and not dead: what its owner may unmark (gap 4).
    fn living_of(&self, owner: &str) -> bool {
        self.owner == owner && !self.dead
    }
}

/// Where an attack is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "phase")]
pub enum Phase {
    /// No attack under way: the active player may announce attackers.
    Idle,
    /// I: the Response phase after attackers are announced.
    Responses { window: Window },
    /// II/III: the defending player declares defenders (or none).
    Defense,
    /// II: the influence lost to undefended attacks is recorded.
    Undefended,
    /// Gap 6: `by` recorded the damage with an effect played: the other
    /// player confirms it, or a judge records it.
    Confirm { by: String, damage: Vec<Damage>, influence_lost: i64 },
    /// Gap 2: a judge rules on attackers left undefended.
    UnblockedRuling,
    /// IV: `picker` chooses the next combat.
    Pick { picker: String },
    /// IV: an individual combat's Response phases.
    CombatResponses { attacker: String, window: Window },
    /// IV: the combat resolves: values and the dead are recorded.
    Resolution { attacker: String },
    /// Gap 1: several defenders: a judge rules.
    CombatRuling { attacker: String },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attack {
    pub active: String,
    pub passive: String,
    /// Attackers in announcement order, each with its blockers.
    pub combats: Vec<(String, Vec<String>)>,
    pub resolved: Vec<String>,
    /// Events and Abilities played: (seq, seat, kind, card, combat attacker or None for part I).
    pub responses: Vec<(u64, String, PlayKind, String, Option<String>)>,
    /// Whose pick is next after `picker` (alternates).
    pub picks: u64,
    /// II/III: the attackers no one defends (all of them when the defending
    /// player allows the attacks; they leave `combats`); empty until then.
    pub undefended: Vec<String>,
    /// II: each undefended attacker's damage, as recorded.
    pub damage: Vec<Damage>,
    /// II, or a judge's ruling (gap 2): the influence this attack cost the defending player.
    pub influence_lost: Option<i64>,
    /// IV: each combat resolved, in the order resolved (kept for the board:
    /// the values recorded are not the creatures' own when effects count).
    pub results: Vec<CombatResult>,
}

/// IV: one combat as resolved: the values with all effects counted, and who died.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CombatResult {
    pub seq: u64,
    pub attacker: String,
    pub values: Values,
    pub defenders: Vec<Named>,
    pub dead: Vec<String>,
    /// Who recorded it; a judge's ruling when the attacker had several defenders (gap 1).
    pub by: String,
    pub ruling: bool,
}

impl CombatResult {
    fn new(
        seq: u64,
        attacker: &str,
        values: &Values,
        defenders: &[Named],
        dead: &BTreeSet<String>,
        by: &str,
        ruling: bool,
    ) -> CombatResult {
        CombatResult {
            seq,
            attacker: attacker.to_string(),
            values: *values,
            defenders: defenders.to_vec(),
            dead: dead.iter().cloned().collect(),
            by: by.to_string(),
            ruling,
        }
    }
}

/// The turn under way (gap 7).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Turn {
    pub number: u64,
    /// The active player: the only one who attacks this turn.
    pub active: String,
    /// I: the active player announces all attackers that will fight this turn, once.
    pub attackers_announced: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct State {
    pub seats: Vec<String>,
    pub judges: Vec<String>,
    /// Every creature the table has named, the dead included (a dead
    /// creature may not come back). A persistent map: the undo mark of every
    /// step copies it, and a copy shares the tree instead of copying each
    /// creature, so a step costs the same however many creatures the game
    /// has seen.
    pub creatures: imbl::OrdMap<String, Creature>,
    /// Each seat's discard pile, in the order cards arrived.
    pub discard: BTreeMap<String, Vec<String>>,
    pub influence_lost: BTreeMap<String, i64>,
    pub phase: Phase,
    /// None until the first turn begins.
    pub turn: Option<Turn>,
    pub attack: Option<Attack>,
    /// The attack finished last, as it stood when it ended (the board shows it between attacks).
    pub last_attack: Option<Attack>,
    pub attacks_finished: u64,
    /// The ruleset version the game was recorded under (see [`FOLDS`]).
    #[serde(default = "version_1")]
    pub version: u64,
}

fn version_1() -> u64 {
    1
}

pub fn open(header: &Header) -> Result<State, String> {
    if header.seats.len() != 2 {
        return Err("WTactics combat is between two players: the active and the passive player".into());
    }
    if !header.options.is_empty() {
        return Err("WTactics takes no ruleset options".into());
    }
    let seats = header.seat_ids();
    Ok(State {
        discard: seats.iter().map(|s| (s.clone(), vec![])).collect(),
        influence_lost: seats.iter().map(|s| (s.clone(), 0)).collect(),
        seats,
        judges: header.judges.clone(),
        creatures: imbl::OrdMap::new(),
        phase: Phase::Idle,
        turn: None,
        attack: None,
        last_attack: None,
        attacks_finished: 0,
        version: header.ruleset_version,
    })
}

impl State {
    /// The state with the discard piles summarised (count and last), so that a
    /// replay's comparison of two states costs the same at event 10 and at
    /// event 100,000 (`rules::Table::live_json`).
    pub fn live(&self) -> Live<'_> {
        Live {
            seats: &self.seats,
            judges: &self.judges,
            creatures: &self.creatures,
            discard: self.discard.iter().map(|(k, v)| (k, kernel::tail(v))).collect(),
            influence_lost: &self.influence_lost,
            phase: &self.phase,
            turn: &self.turn,
            attack: &self.attack,
            last_attack: &self.last_attack,
            attacks_finished: self.attacks_finished,
        }
    }
}

/// [`State::live`]: the state with each discard pile as a count and the newest.
#[derive(Serialize)]
pub struct Live<'a> {
    seats: &'a [String],
    judges: &'a [String],
    creatures: &'a imbl::OrdMap<String, Creature>,
    discard: BTreeMap<&'a String, kernel::Tail<'a, String>>,
    influence_lost: &'a BTreeMap<String, i64>,
    phase: &'a Phase,
    turn: &'a Option<Turn>,
    attack: &'a Option<Attack>,
    last_attack: &'a Option<Attack>,
    attacks_finished: u64,
}

// What replay shows changed from one state to the next (`delta::Changes`),
// member by member.
crate::changes_by_member!(Live<'_> { attack, attacks_finished, creatures, discard, influence_lost, judges, last_attack, phase, seats, turn });

/// A refusal about a creature of a list the table typed, naming the list
/// (`attackers`, `blocks`).
fn in_list(field: &'static str) -> impl Fn(Refusal) -> Refusal {
    move |(rule, message)| (rule, format!("{field}: {message}"))
}

/// IV: who dies in a combat of one attacker (with `values`) against one
/// defender: the defender when the attacker's ATK is higher than its DEF,
/// the attacker when the defender's ATK is equal to or higher than its DEF.
fn dies(attacker: &str, values: &Values, defender: &Named) -> Vec<String> {
    let mut dead = vec![];
    if values.atk > defender.def {
        dead.push(defender.name.clone());
    }
    if defender.atk >= values.def {
        dead.push(attacker.to_string());
    }
    dead
}

impl State {
    pub fn apply(&self, seq: u64, actor: &str, action: &serde_json::Value) -> Result<State, Violation> {
        kernel::apply(self, State::view, NAME, action, |s, a: &Action| s.step(seq, actor, a))
    }

    /// [`State::apply`] on this state: the step runs in place and a refusal
    /// is undone (see the [`kernel::Undo`] impl), so nothing is copied but
    /// the small rest of the state.
    pub fn apply_in_place(&mut self, seq: u64, actor: &str, action: &serde_json::Value) -> Result<(), Violation> {
        kernel::apply_undoable(self, State::view, NAME, action, |s, a: &Action| s.step(seq, actor, a))
    }
}

/// The discard piles only grow (cards arrive at the end): a refused step is
/// undone by cutting each pile back, and everything else is copied (the
/// creatures in O(1): see [`State::creatures`]).
impl kernel::Undo for State {
    type Mark = (State, BTreeMap<String, usize>);
    fn mark(&self) -> Self::Mark {
        let State {
            seats,
            judges,
            creatures,
            discard,
            influence_lost,
            phase,
            turn,
            attack,
            last_attack,
            attacks_finished,
            version,
        } = self;
        let rest = State {
            seats: seats.clone(),
            judges: judges.clone(),
            creatures: creatures.clone(),
            discard: BTreeMap::new(),
            influence_lost: influence_lost.clone(),
            phase: phase.clone(),
            turn: turn.clone(),
            attack: attack.clone(),
            last_attack: last_attack.clone(),
            attacks_finished: *attacks_finished,
            version: *version,
        };
        (rest, kernel::pile_lengths(discard))
    }
    fn undo(&mut self, (rest, piles): Self::Mark) {
        let mut discard = std::mem::take(&mut self.discard);
        kernel::cut_piles(&mut discard, &piles);
        *self = State { discard, ..rest };
    }
}

impl State {
    fn is_judge(&self, actor: &str) -> bool {
        self.judges.iter().any(|j| j == actor)
    }

    fn other(&self, seat: &str) -> String {
        self.seats.iter().find(|s| *s != seat).cloned().expect("two seats")
    }

    fn step(&mut self, seq: u64, actor: &str, action: &Action) -> Result<(), Refusal> {
        match (self.phase.clone(), action) {
            (phase, Action::Announce(Announce::Turn {})) => {
                let rule = row(Row::NextTurn).rule;
                if !self.seats.iter().any(|s| s == actor) {
                    return refuse(rule, format!("{actor} is not a player"));
                }
                if phase != Phase::Idle {
                    return refuse(rule, "an attack is under way: the turn goes on until it is over");
                }
                let number = self.turn.as_ref().map_or(1, |t| t.number + 1);
                self.turn = Some(Turn { number, active: actor.to_string(), attackers_announced: false });
                Ok(())
            }
            (Phase::Idle, Action::Announce(Announce::Attackers { attackers })) => self.attackers(actor, attackers),
            (Phase::Idle, Action::Resolve(Resolve::Unmark { creatures })) => {
                for name in creatures {
                    match self.creatures.get_mut(name) {
                        Some(c) if c.living_of(actor) => c.marked = false,
                        _ => {
                            return refuse(RULE_UNMARK, format!("{name} is not a living creature of {actor}"));
                        }
                    }
                }
                Ok(())
            }
            (Phase::Responses { mut window }, _) => {
                self.respond(seq, actor, &mut window, action, None)?;
                self.phase = if window.is_closed() { Phase::Defense } else { Phase::Responses { window } };
                Ok(())
            }
            (Phase::Defense, Action::Announce(Announce::Defenders { blocks })) => self.defenders(actor, blocks),
            (Phase::Undefended, Action::Resolve(Resolve::Undefended { damage, influence_lost })) => {
                let step = self.step_now();
                if !self.may_act_now(actor) {
                    return refuse(step.place(), format!("{actor} may not record this"));
                }
                self.check_undefended(damage, *influence_lost)?;
                // Gap 6: with an effect played, a player's record is a claim.
                if self.version >= 2 && self.effects_played() && !self.is_judge(actor) {
                    self.phase = Phase::Confirm {
                        by: actor.to_string(),
                        damage: damage.clone(),
                        influence_lost: *influence_lost,
                    };
                    return Ok(());
                }
                self.lose_influence(damage);
                Ok(())
            }
            (Phase::Confirm { by, damage, .. }, Action::Resolve(Resolve::Confirm {})) => {
                if !self.may_act_now(actor) || self.is_judge(actor) {
                    let other = self.other(&by);
                    return refuse(
                        self.step_now().rule,
                        format!("{other} confirms what {by} recorded (or a judge records the damage), not {actor}"),
                    );
                }
                self.lose_influence(&damage);
                Ok(())
            }
            (Phase::Confirm { by, .. }, Action::Resolve(Resolve::Undefended { damage, influence_lost })) => {
                if !self.is_judge(actor) {
                    let other = self.other(&by);
                    return refuse(
                        self.step_now().rule,
                        format!("{by} recorded the damage: {other} confirms it, or a judge records it; not {actor}"),
                    );
                }
                self.check_undefended(damage, *influence_lost)?;
                self.lose_influence(damage);
                Ok(())
            }
            (Phase::UnblockedRuling, Action::Resolve(Resolve::Unblocked { influence_lost })) => {
                let step = self.step_now();
                if !self.may_act_now(actor) {
                    return refuse(step.rule, format!("{actor} is not a judge"));
                }
                if *influence_lost < 0 {
                    return refuse(step.place(), "influence lost cannot be negative");
                }
                let attack = self.attack.as_mut().expect("attack");
                attack.influence_lost = Some(*influence_lost);
                let passive = attack.passive.clone();
                *self.influence_lost.entry(passive).or_default() += influence_lost;
                self.next_pick();
                Ok(())
            }
            (Phase::Pick { picker }, Action::Announce(Announce::NextCombat { attacker })) => {
                if !self.may_act_now(actor) {
                    return refuse(self.step_now().rule, format!("it is {picker}'s pick, not {actor}'s"));
                }
                self.start_combat(attacker)
            }
            (Phase::CombatResponses { attacker, mut window }, _) => {
                self.respond(seq, actor, &mut window, action, Some(attacker.clone()))?;
                self.phase = if !window.is_closed() {
                    Phase::CombatResponses { attacker, window }
                } else if self.blockers(&attacker).len() > 1 {
                    Phase::CombatRuling { attacker }
                } else {
                    Phase::Resolution { attacker }
                };
                Ok(())
            }
            (
                Phase::Resolution { attacker },
                Action::Resolve(Resolve::Combat { attacker: values, defenders, dead }),
            ) => {
                let rule = self.step_now().rule;
                if !self.may_act_now(actor) {
                    return refuse(rule, format!("{actor} may not record this"));
                }
                self.check_values(&attacker, values, defenders)?;
                let d = &defenders[0];
                let expected: BTreeSet<String> = dies(&attacker, values, d).into_iter().collect();
                let recorded: BTreeSet<String> = dead.iter().cloned().collect();
                if recorded != expected || recorded.len() != dead.len() {
                    return refuse(
                        rule,
                        format!(
                            "ATK {} against DEF {}, and ATK {} against DEF {}: the dead are {:?}, not {:?}",
                            values.atk, d.def, d.atk, values.def, expected, recorded
                        ),
                    );
                }
                let result = CombatResult::new(seq, &attacker, values, defenders, &recorded, actor, false);
                self.end_combat(&attacker, &recorded, result);
                Ok(())
            }
            (
                Phase::CombatRuling { attacker },
                Action::Resolve(Resolve::Combat { attacker: values, defenders, dead }),
            ) => {
                let step = self.step_now();
                if !self.may_act_now(actor) {
                    return refuse(step.rule, format!("{actor} is not a judge"));
                }
                self.check_values(&attacker, values, defenders)?;
                let in_combat: BTreeSet<String> = self.in_combat(&attacker).into_iter().collect();
                let recorded: BTreeSet<String> = dead.iter().cloned().collect();
                if !recorded.is_subset(&in_combat) {
                    return refuse(step.place(), format!("only creatures of this combat can die in it: {in_combat:?}"));
                }
                let result = CombatResult::new(seq, &attacker, values, defenders, &recorded, actor, true);
                self.end_combat(&attacker, &recorded, result);
                Ok(())
            }
            _ => {
                let view = self.view();
                let legal: Vec<_> = view.legal.iter().map(|t| t.name()).collect();
                refuse(
                    "the combat sequence",
                    format!("not legal now: the next action is {} by {}", legal.join(" or "), view.may_act.join(", ")),
                )
            }
        }
    }

    /// Registers or checks a creature the table names; returns its name.
    fn creature(&mut self, spec: &CreatureSpec, owner: &str, rule: &'static str) -> Result<(), Refusal> {
        check_name("creature", &spec.name).or_else(|m| refuse(rule, m))?;
        for e in &spec.enchantments {
            check_name("enchantment", &e.card).or_else(|m| refuse(rule, m))?;
            if !self.seats.contains(&e.owner) {
                return refuse(rule, format!("enchantment owner {} is not a seat", e.owner));
            }
        }
        match self.creatures.get_mut(&spec.name) {
            Some(c) => {
                if c.owner != owner {
                    return refuse(rule, format!("{} is {}'s creature", spec.name, c.owner));
                }
                if c.dead {
                    return refuse(rule, format!("{} is dead (in the discard pile)", spec.name));
                }
                if spec.atk.is_some_and(|a| a != c.atk) || spec.def.is_some_and(|d| d != c.def) {
                    return refuse(rule, format!("{} is ATK {} DEF {}", spec.name, c.atk, c.def));
                }
                if !spec.enchantments.is_empty() {
                    c.enchantments = spec.enchantments.clone();
                }
            }
            None => {
                let (Some(atk), Some(def)) = (spec.atk, spec.def) else {
                    return refuse(rule, format!("{} is new: give its ATK and DEF", spec.name));
                };
                self.creatures.insert(
                    spec.name.clone(),
                    Creature {
                        owner: owner.to_string(),
                        atk,
                        def,
                        marked: false,
                        dead: false,
                        enchantments: spec.enchantments.clone(),
                    },
                );
            }
        }
        if self.creatures[&spec.name].marked {
            return refuse(RULE_UNMARKED, format!("{} is marked", spec.name));
        }
        Ok(())
    }

    /// I and gap 7: whether `actor` may announce the attackers now (between
    /// attacks): the active player, once a turn; before the first turn
    /// either player, whose announcement begins turn 1.
    fn may_announce_attackers(&self, actor: &str) -> Result<(), Refusal> {
        if !self.seats.iter().any(|s| s == actor) {
            return refuse(row(Row::Attackers).rule, format!("{actor} is not a player"));
        }
        let Some(turn) = &self.turn else { return Ok(()) };
        if turn.active != actor {
            return refuse(
                RULE_ACTIVE,
                format!(
                    "it is {}'s turn; {actor}'s turn begins with {{\"type\":\"announce\",\"what\":\"turn\"}}",
                    turn.active
                ),
            );
        }
        if turn.attackers_announced {
            return refuse(
                RULE_ALL_ATTACKERS,
                format!(
                    "{actor} announced the attackers of turn {} already; the next turn begins with {{\"type\":\"announce\",\"what\":\"turn\"}}",
                    turn.number
                ),
            );
        }
        Ok(())
    }

    fn attackers(&mut self, actor: &str, attackers: &[CreatureSpec]) -> Result<(), Refusal> {
        self.may_announce_attackers(actor)?;
        let rule = row(Row::Attackers).rule;
        if attackers.is_empty() {
            return refuse(rule, "announce at least one attacker");
        }
        let mut names = BTreeSet::new();
        for spec in attackers {
            if !names.insert(spec.name.clone()) {
                return refuse(rule, format!("attackers: {} is announced twice", spec.name));
            }
            self.creature(spec, actor, rule).map_err(in_list("attackers"))?;
        }
        for spec in attackers {
            self.creatures.get_mut(&spec.name).expect("registered").marked = true;
        }
        // The first attack of the record begins the first turn (gap 7).
        self.turn
            .get_or_insert_with(|| Turn { number: 1, active: actor.to_string(), attackers_announced: false })
            .attackers_announced = true;
        let passive = self.other(actor);
        self.attack = Some(Attack {
            active: actor.to_string(),
            passive: passive.clone(),
            combats: attackers.iter().map(|a| (a.name.clone(), vec![])).collect(),
            resolved: vec![],
            responses: vec![],
            picks: 0,
            undefended: vec![],
            damage: vec![],
            influence_lost: None,
            results: vec![],
        });
        self.phase = Phase::Responses { window: Window::new(vec![passive, actor.to_string()]) };
        Ok(())
    }

    fn respond(
        &mut self,
        seq: u64,
        actor: &str,
        window: &mut Window,
        action: &Action,
        combat: Option<String>,
    ) -> Result<(), Refusal> {
        let rule = self.step_now().rule;
        if !self.may_act_now(actor) {
            let holder = window.holder().unwrap_or_default();
            return refuse(rule, format!("it is {holder}'s opportunity to respond or pass, not {actor}'s"));
        }
        match action {
            Action::Pass {} => window.pass(),
            Action::Play { kind, card } => {
                check_name("card", card).or_else(|m| refuse(rule, m))?;
                self.attack.as_mut().expect("attack").responses.push((
                    seq,
                    actor.to_string(),
                    *kind,
                    card.clone(),
                    combat,
                ));
                window.played();
            }
            _ => {
                return refuse(rule, "in a Response phase a player plays one Event or one Ability, or passes");
            }
        }
        Ok(())
    }

    fn defenders(&mut self, actor: &str, blocks: &[Block]) -> Result<(), Refusal> {
        let attack = self.attack.clone().expect("attack");
        if !self.may_act_now(actor) {
            return refuse(self.step_now().rule, format!("only {} defends", attack.passive));
        }
        if blocks.is_empty() {
            let attack = self.attack.as_mut().expect("attack");
            attack.undefended = attack.combats.iter().map(|(a, _)| a.clone()).collect();
            self.phase = Phase::Undefended;
            return Ok(());
        }
        let attackers: BTreeSet<&str> = attack.combats.iter().map(|(a, _)| a.as_str()).collect();
        let rule = row(Row::Defenders).rule;
        let mut seen = BTreeSet::new();
        for b in blocks {
            if !attackers.contains(b.attacker.as_str()) {
                return refuse(rule, format!("blocks: {} is not an attacker", b.attacker));
            }
            if attackers.contains(b.defender.name.as_str()) {
                return refuse(rule, format!("blocks: {} is an attacker and cannot also defend", b.defender.name));
            }
            if !seen.insert(b.defender.name.clone()) {
                return refuse(rule, format!("blocks: {} can only defend against one attacker", b.defender.name));
            }
            self.creature(&b.defender, actor, rule).map_err(in_list("blocks"))?;
        }
        let attack = self.attack.as_mut().expect("attack");
        for b in blocks {
            let combat = attack.combats.iter_mut().find(|(a, _)| *a == b.attacker).expect("attacker");
            combat.1.push(b.defender.name.clone());
        }
        // Attackers without defenders: the text is silent (gap 2).
        let unblocked = attack.combats.iter().any(|(_, d)| d.is_empty());
        attack.undefended = attack.combats.iter().filter(|(_, d)| d.is_empty()).map(|(a, _)| a.clone()).collect();
        attack.combats.retain(|(_, d)| !d.is_empty());
        if unblocked {
            self.phase = Phase::UnblockedRuling;
        } else {
            self.next_pick();
        }
        Ok(())
    }

    fn blockers(&self, attacker: &str) -> Vec<String> {
        self.attack
            .as_ref()
            .and_then(|a| a.combats.iter().find(|(x, _)| x == attacker))
            .map(|(_, d)| d.clone())
            .unwrap_or_default()
    }

    /// The next combat is picked by the attacking player first, then alternately.
    fn next_pick(&mut self) {
        let left = self.combats_left();
        let attack = self.attack.as_mut().expect("attack");
        let picker = if attack.picks.is_multiple_of(2) { attack.active.clone() } else { attack.passive.clone() };
        match left.len() {
            0 => self.finish_attack(),
            // With one combat left there is nothing to choose.
            1 => {
                self.start_combat(&left[0]).expect("the last combat can start");
            }
            _ => self.phase = Phase::Pick { picker },
        }
    }

    /// IV: the combats (by attacker) not resolved yet, in the order announced.
    fn combats_left(&self) -> Vec<String> {
        let attack = self.attack.as_ref().expect("attack");
        attack.combats.iter().map(|(a, _)| a.clone()).filter(|a| !attack.resolved.contains(a)).collect()
    }

    fn start_combat(&mut self, attacker: &str) -> Result<(), Refusal> {
        if !self.combats_left().iter().any(|a| a == attacker) {
            return refuse(row(Row::NextCombat).rule, format!("{attacker} has no combat left to resolve"));
        }
        let attack = self.attack.as_mut().expect("attack");
        attack.picks += 1;
        let window = Window::new(vec![attack.passive.clone(), attack.active.clone()]);
        self.phase = Phase::CombatResponses { attacker: attacker.to_string(), window };
        Ok(())
    }

    /// Whether an Event or Ability was played in this attack (part I's
    /// Response phase or any of its combats'). Without one, no effect can
    /// have changed a creature's values: they are its own ATK and DEF.
    fn effects_played(&self) -> bool {
        !self.attack.as_ref().expect("attack").responses.is_empty()
    }

    /// The row of the step under way.
    fn step_now(&self) -> &'static Step {
        row(match &self.phase {
            Phase::Idle if self.turn.as_ref().is_some_and(|t| t.attackers_announced) => Row::NextTurn,
            Phase::Idle => Row::Attackers,
            Phase::Responses { .. } => Row::Responses,
            Phase::Defense => Row::Defend,
            Phase::Undefended => Row::Undefended,
            Phase::Confirm { .. } => Row::Confirm,
            Phase::UnblockedRuling => Row::UnblockedRuling,
            Phase::Pick { .. } => Row::NextCombat,
            Phase::CombatResponses { .. } => Row::CombatResponses,
            Phase::Resolution { .. } => Row::Resolution,
            Phase::CombatRuling { .. } => Row::CombatRuling,
        })
    }

    /// Whether `actor` holds the role `who` now.
    fn acts(&self, who: Who, actor: &str) -> bool {
        match who {
            Players => self.seats.iter().any(|s| s == actor),
            Opportunity => match &self.phase {
                Phase::Responses { window } | Phase::CombatResponses { window, .. } => window.holder() == Some(actor),
                _ => false,
            },
            Defending => self.attack.as_ref().is_some_and(|a| a.passive == actor),
            Picker => matches!(&self.phase, Phase::Pick { picker } if picker == actor),
            Recorder => {
                self.attack.as_ref().is_some_and(|a| actor == a.active || actor == a.passive) || self.is_judge(actor)
            }
            Confirmer => match &self.phase {
                Phase::Confirm { by, .. } => {
                    (self.seats.iter().any(|s| s == actor) && actor != by) || self.is_judge(actor)
                }
                _ => false,
            },
            Judge => self.is_judge(actor),
        }
    }

    /// Whether `actor` is who acts at the step under way.
    fn may_act_now(&self, actor: &str) -> bool {
        self.acts(self.step_now().who, actor)
    }

    /// Who acts at the step under way: the seats, then the judges.
    fn acting(&self) -> Vec<String> {
        let who = self.step_now().who;
        self.seats.iter().chain(&self.judges).filter(|a| self.acts(who, a)).cloned().collect()
    }

    /// II: an undefended attack's damage as recorded: every attacker once,
    /// its own ATK when no effect was played (gap 5), and the total.
    fn check_undefended(&self, damage: &[Damage], influence_lost: i64) -> Result<(), Refusal> {
        let attack = self.attack.as_ref().expect("attack");
        let step = self.step_now();
        let mut named: Vec<&str> = damage.iter().map(|d| d.attacker.as_str()).collect();
        named.sort();
        let mut attackers: Vec<&str> = attack.combats.iter().map(|(a, _)| a.as_str()).collect();
        attackers.sort();
        if named != attackers {
            return refuse(step.place(), format!("name the damage of every attacker once: {}", attackers.join(", ")));
        }
        if let Some(own) = self.own_damage() {
            for d in damage {
                let atk = own.iter().find(|o| o.attacker == d.attacker).expect("an attacker").damage;
                if d.damage != atk {
                    return refuse(
                        RULE_DAMAGE,
                        format!(
                            "no Event or Ability was played in this attack, so {}'s damage is its own ATK {atk}, not {}",
                            d.attacker, d.damage
                        ),
                    );
                }
            }
        }
        let total: i64 = damage.iter().map(|d| d.damage).sum();
        if damage.iter().any(|d| d.damage < 0) || influence_lost != total {
            return refuse(
                row(Row::Undefended).rule,
                format!("the attackers' damage totals {total}, not {influence_lost}"),
            );
        }
        Ok(())
    }

    /// II: the defending player loses the damage's total in influence; the attack is over.
    fn lose_influence(&mut self, damage: &[Damage]) {
        let total: i64 = damage.iter().map(|d| d.damage).sum();
        let passive = self.attack.as_ref().expect("attack").passive.clone();
        *self.influence_lost.entry(passive).or_default() += total;
        let a = self.attack.as_mut().expect("attack");
        (a.damage, a.influence_lost) = (damage.to_vec(), Some(total));
        self.finish_attack();
    }

    /// II (gap 5): each undefended attacker's damage when no Event or
    /// Ability was played in the attack: its own ATK. None when effects
    /// count: then the table records the damage.
    fn own_damage(&self) -> Option<Vec<Damage>> {
        if self.effects_played() {
            return None;
        }
        let attack = self.attack.as_ref().expect("attack");
        let own = |a: &String| Damage { attacker: a.clone(), damage: self.creatures[a].atk };
        Some(attack.combats.iter().map(|(a, _)| own(a)).collect())
    }

    /// IV: the values of this combat's attacker and of its defenders (in the
    /// order they were assigned) when no Event or Ability was played in the
    /// attack: the creatures' own. None when effects count: then the table
    /// records the values.
    fn own_values(&self, attacker: &str) -> Option<(Values, Vec<Named>)> {
        if self.effects_played() {
            return None;
        }
        let c = &self.creatures[attacker];
        let named = |name: &String| {
            let d = &self.creatures[name];
            Named { name: name.clone(), atk: d.atk, def: d.def }
        };
        Some((Values { atk: c.atk, def: c.def }, self.blockers(attacker).iter().map(named).collect()))
    }

    /// IV: the creatures that fight in this combat: the attacker, then its defenders.
    fn in_combat(&self, attacker: &str) -> Vec<String> {
        let mut all = vec![attacker.to_string()];
        all.extend(self.blockers(attacker));
        all
    }

    /// I and III: the creatures of `owner` that may attack or defend now
    /// (the checks of [`State::creature`] on a creature already named):
    /// its own, alive and unmarked.
    fn fighters(&self, owner: &str) -> Vec<(&String, &Creature)> {
        self.creatures.iter().filter(|(_, c)| c.living_of(owner) && !c.marked).collect()
    }

    /// The values recorded name this combat's creatures; with no Event or
    /// Ability played in this attack, they are the creatures' own.
    fn check_values(&self, attacker: &str, values: &Values, defenders: &[Named]) -> Result<(), Refusal> {
        let blockers = self.blockers(attacker);
        let mut named: Vec<&str> = defenders.iter().map(|d| d.name.as_str()).collect();
        named.sort();
        let mut want: Vec<&str> = blockers.iter().map(String::as_str).collect();
        want.sort();
        if named != want {
            return refuse(
                row(Row::Resolution).rule,
                format!("give the values of every defender of {attacker} once: {}", want.join(", ")),
            );
        }
        if let Some((own, own_defenders)) = self.own_values(attacker)
            && (own != *values || defenders.iter().any(|d| !own_defenders.contains(d)))
        {
            return refuse(
                RULE_EFFECTS,
                "no Event or Ability was played in this attack, so the values are the creatures' own ATK and DEF",
            );
        }
        Ok(())
    }

    /// "When combat is over place all dead Creatures into the discard piles,
    /// along with all Events that were used during the combat and also any
    /// Enchantments that were attached to the Creatures."
    fn end_combat(&mut self, attacker: &str, dead: &BTreeSet<String>, result: CombatResult) {
        for name in dead {
            let c = self.creatures.get_mut(name).expect("creature");
            c.dead = true;
            let (owner, enchantments) = (c.owner.clone(), std::mem::take(&mut c.enchantments));
            self.discard.entry(owner).or_default().push(name.clone());
            for e in enchantments {
                self.discard.entry(e.owner).or_default().push(e.card);
            }
        }
        let attack = self.attack.as_mut().expect("attack");
        for (_, seat, kind, card, combat) in &attack.responses {
            if *kind == PlayKind::Event && combat.as_deref() == Some(attacker) {
                self.discard.entry(seat.clone()).or_default().push(card.clone());
            }
        }
        attack.resolved.push(attacker.to_string());
        attack.results.push(result);
        self.next_pick();
    }

    fn finish_attack(&mut self) {
        if let Some(attack) = self.attack.take() {
            for (_, seat, kind, card, combat) in &attack.responses {
                if *kind == PlayKind::Event && combat.is_none() {
                    self.discard.entry(seat.clone()).or_default().push(card.clone());
                }
            }
            self.last_attack = Some(attack);
        }
        self.attacks_finished += 1;
        self.phase = Phase::Idle;
    }

    pub fn view(&self) -> View {
        let step = self.step_now();
        let title = match (&self.phase, &self.turn) {
            (Phase::Idle, Some(t)) => format!("turn {} ({}): {}", t.number, t.active, step.title),
            _ => step.title.to_string(),
        };
        let ruling = match &self.phase {
            Phase::UnblockedRuling => Some(
                "attackers were left undefended while others were defended; the text does not say what they do to influence"
                    .to_string(),
            ),
            Phase::CombatRuling { attacker } => Some(format!(
                "{attacker} has several defenders; the text does not say how several defenders strike or are struck"
            )),
            _ => None,
        };
        View {
            step: StepRef {
                number: step.part.into(),
                reference: format!("WTactics combat {} ({title})", step.part),
                title,
            },
            may_act: self.acting(),
            legal: step.may.to_vec(),
            awaiting_ruling: ruling,
        }
    }
}
