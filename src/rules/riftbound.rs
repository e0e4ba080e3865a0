//! Riftbound: combat and showdowns (`shared/rules/riftbound-combat-and-showdowns.md`).
//!
//! The procedure is the step table [`STEPS`], in the text's words: what
//! the view, the refusals and the moves say at each step is read from it.
//!
//! | text | what the reducer does |
//! |---|---|
//! | When Combat Occurs (620-621) | after a move (a Cleanup with an empty Chain), every battlefield holding units of two opposing players is a pending combat; with several, the turn player chooses which resolves first; one whose conditions changed before it begins does not happen |
//! | Two-Player Limit | a battlefield with a pending or ongoing combat is refused as a destination to any third player |
//! | Step 1: Showdown (625) | roles (who applied Contested is the Attacker, with Focus); Assault X / Shield X add to Might while attacking / defending, instances stack; the initial chain of "when I attack" / "when I defend" triggers; then the showdown window |
//! | Showdown Rules (545-553) | the player with Focus plays an Action or Reaction, activates an ability, invites a player, or passes; a card opens a Chain, on which Reactions may be added; items resolve newest first; Focus passes when the Chain resolves; the showdown ends when all relevant players pass in sequence |
//! | Without Combat | units moving to an uncontrolled battlefield: all players relevant, no damage, then the mover controls it |
//! | Step 2: Combat Damage (626) | only if both sides have units: each side's Might is summed; the Attacker assigns first, then the Defender; Tank units take lethal damage first; a unit gets lethal damage (damage >= Might) before damage moves to the next; the amounts are checked whatever the order of listing (gap 6) |
//! | Step 3: Resolution (627) | units with damage >= Might die; the outcome table (Neither: no control change, gap 5); Contested cleared; all damage cleared |
//! | Battlefield Control (179-181) | control is lost with a player's last units there, maintained while contested; a player left alone there controls it (gap 5) |
//! | Scoring (629-633) | Conquer and Hold, once per battlefield per turn; the final point (Hold scores it; Conquer only if every battlefield was conquered this turn, else the player draws a card instead, said in words in the score); victory at 8 (1v1, FFA3, FFA4) or 11 (2v2) |
//!
//! # Header options
//! `mode` (`1v1`, `FFA3`, `FFA4`, `2v2`, as the text writes them; `ffa3`
//! and `ffa4` too), `battlefields` (their names) and,
//! for 2v2, `teams` (two lists of two seats). Scores are per player, or per
//! team in 2v2.
//!
//! A game recorded from the middle of a match starts between two turns, with
//! `scores` (`{"p1":3,"p2":5}`; in 2v2 `{"team1":3}`; each below the victory
//! score), `control` (`{"Altar":"p1"}`), the `units` at controlled
//! battlefields (`{"Altar":{"p1":[{"name":"Wall","might":3}]}}`, as a move
//! gives them; a controller has units there and no opposing units are, since
//! "Uncontrolled - No player has Units there" and opposing units would be a
//! combat) and `first_turn` (the seat whose turn the record begins with;
//! default: the first in turn order).
//!
//! # Gaps in the text, and what the reducer does there
//! 1. **Card effects**: the text names no card, so a chain item's effect is
//!    what the table records when it resolves (`resolve` `chain_item`, with
//!    the units it changed); the reducer applies and shows it.
//! 2. **Who moves units**: the turn player, between showdowns (`announce`
//!    `move`); a unit's first mention gives its Might and keywords. A move
//!    (or a chain item's change) of a unit to where it stands is refused: it
//!    would move nothing.
//! 3. **Focus after a pass**: a pass gives Focus to the next relevant player
//!    in seat order (the text: "Focus passes between Relevant Players").
//! 4. **Order of the initial chain**: the Attacker (Focus) puts "when I
//!    attack" triggers first, then the Defender "when I defend" triggers,
//!    round by round until both pass ("Player with Focus orders first").
//! 5. **Control when units leave or die.** Outside combat the control rules
//!    apply: control is "Lost if you have no Units there", unless the
//!    battlefield is contested ("Maintained while Contested by opponent");
//!    then a battlefield where one player still has units is that player's
//!    ("Controlled - A player has Units there (outside Combat)"), which is
//!    gaining control, a Conquer (630.1, with its limits), and one where no
//!    one has units is uncontrolled ("Uncontrolled - No player has Units
//!    there"). A combat that leaves neither side is the case the text
//!    answers itself, twice: the outcome table's "Neither | No control
//!    change" and the FAQ "What if all Units die in Combat? No control
//!    change occurs": the controller before the combat keeps the
//!    battlefield, and no judge is asked. It keeps it with no units there
//!    until an opponent's units move in: they contest it, no combat follows
//!    ("Combat occurs (if defender has Units)"), and the Cleanup gives it to
//!    them ("After Combat, whoever has remaining Units controls it").
//! 6. **Over-assigned damage, and the order of listing**: the text forbids
//!    moving on before a unit has lethal damage, and defines "Lethal damage
//!    = damage ≥ Unit's Might": more than Might is lethal damage, so a unit
//!    may get more before damage moves on. An assignment is the amounts each
//!    unit gets, whatever order they are listed in: it is legal when some
//!    order of reaching the units keeps the rule (at most one unit, the last
//!    reached, gets less than lethal; Tanks reach lethal before any other
//!    unit gets damage). So 4 and 4 on units of Might 3 and 5 is legal
//!    listed either way, and 2-1-1-1 is refused listed any way.
//! 7. **Damage already on a unit** (from a chain item) counts towards lethal.
//! 8. **A Conquer that cannot score the final point** still uses the
//!    battlefield's one score of the turn.
//! 9. **A card that moves units to an uncontrolled battlefield during a
//!    showdown** would open another showdown at a time the text does not
//!    give: such a change is refused; record the move after the showdown.
//!    Moves by a card into an opponent's battlefield contest it, and the
//!    combat is pending until the next Cleanup.
//! 10. **Turn order**: the text refers to "Section 5: Turn Structure", which
//!     it does not include. Turns pass in the header's seat order, starting
//!     with the first seat (or `first_turn`); in 2v2 the teams alternate,
//!     each team's players in the order the `teams` option lists them (first
//!     of team 1, first of team 2, second of team 1, second of team 2). A
//!     turn out of order is refused, naming who is next.
//! 12. **The end of a turn** (Section 5 too): the turn is the turn player's
//!     until it records `announce` `end_turn` (or a judge records it, for a
//!     turn player who left the table), outside any showdown, combat or
//!     choice of pending combat; only then may the next player in turn order
//!     announce its turn (and score Hold). Games recorded under version 1,
//!     before `end_turn`, fold as they were: there the next player's
//!     announcement ended the turn under way.
//! 11. **A unit a card moves into the battlefield of the combat under way**:
//!     Step 1 applies the combat modifiers (Assault, Shield) to the units
//!     there as the combat begins; the keywords give them "while attacking"
//!     and "while defending". Whether a unit that arrives later is attacking
//!     or defending, and with what Might it fights, the text does not say:
//!     such a change is refused (as in gap 9); record the move after the combat.

use std::collections::{BTreeMap, BTreeSet};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::event::{ActionType, Header, check_name};
use crate::kernel::{self, Chain, ChainItem, Refusal, StepRef, View, Violation, Window, refuse};

pub const NAME: &str = "riftbound";
/// Version 2: a turn ends by the turn player's `end_turn` (or a judge's),
/// and only then does the next player in turn order announce its turn.
pub const VERSION: u64 = 2;
/// Version 1 games (no `end_turn`: the next player's turn ended the one
/// under way) fold as they were recorded.
pub const FOLDS: &[u64] = &[1, 2];

mod board;
mod moves;
pub use board::{Board, UnitLine, board, changes, outcome, stats};
pub use moves::moves;

// ---------------------------------------------------------------------------
// The step table.
// ---------------------------------------------------------------------------

// The text's procedure (`shared/rules/riftbound-combat-and-showdowns.md`),
// one row per place the reducer can be, to read beside the document: a
// turn (Section 5, which the text refers to), When Combat Occurs, the Steps
// of Combat with Step 1's showdown window as the Showdown Rules give it,
// and Scoring. The view's step, who may act and what is legal, the moves'
// plays, and the rule texts the refusals quote are read from the row of the
// current phase (`Phase::row`).

/// Who acts at a step: a role, which the state names a seat (or the judges) for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Who {
    /// The player whose turn it is.
    TurnPlayer,
    /// The next player in turn order (gap 10), who begins the next turn once this one has ended (gap 12).
    NextInTurnOrder,
    /// The player with Focus.
    Focus,
    /// The next relevant player to add a reaction to the open Chain, or pass.
    Reacting,
    /// The player invited into the showdown.
    Invited,
    /// The player who played the Chain's newest item.
    PlayedIt,
    /// The side assigning its damage: the Attacker, then the Defender.
    Assigning,
    Judge,
}

/// The row of the table a phase is at (`STEPS[at as usize]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum At {
    Turn,
    Between,
    PendingCombat,
    InitialChain,
    Focus,
    Invited,
    Chain,
    Resolving,
    Damage,
    Victory,
    /// Version 1's turn: the next player's announcement ended it.
    TurnV1,
}

struct Step {
    at: At,
    /// The rule numbers as the text writes them.
    no: &'static str,
    /// The title in the text's words.
    title: &'static str,
    /// Who acts, in the order the view lists them, each with the rule a
    /// refusal quotes when someone else acts.
    who: &'static [(Who, &'static str)],
    /// What may be recorded: the action type, and what is announced or
    /// resolved (its `what`), played (the kinds in `plays`) or passed.
    may: &'static [(ActionType, &'static str)],
    /// The kinds of card or ability that may be played.
    plays: &'static [PlayKind],
    /// The rule a refusal quotes when what is recorded is not what the step takes.
    rule: &'static str,
}

const fn step(
    at: At,
    no: &'static str,
    title: &'static str,
    who: &'static [(Who, &'static str)],
    may: &'static [(ActionType, &'static str)],
    plays: &'static [PlayKind],
    rule: &'static str,
) -> Step {
    Step { at, no, title, who, may, plays, rule }
}

const RULE_SHOWDOWN: &str = "Showdown (545-553): the player with Focus plays an Action or Reaction, activates an ability, invites a player, or passes; the showdown ends when all Relevant Players pass in sequence";
const RULE_CHAIN: &str =
    "each card played creates a Chain; its items resolve newest first; Focus passes when the Chain resolves";
const RULE_DISTRIBUTE: &str = "626: Distribute Damage (Attacker first, then Defender)";

use ActionType as T;
use PlayKind as K;
use Who::*;

const RULE_MOVES: &str = "gap 2 (module docs): the turn player moves units between showdowns";
const RULE_ORDER: &str = "gap 10 (module docs): turns pass in seat order (2v2: the teams alternate)";
const RULE_END: &str = "gap 12 (module docs): the turn player ends its turn (or a judge does), outside showdowns and combats; then the next in turn order begins";

// The turn rows are the text's "Section 5: Turn Structure", which it refers
// to but does not include: their number names the section (see `View`).
#[rustfmt::skip]
const STEPS: &[Step] = &[
    step(At::Turn, "Section 5", "turn under way",
        &[(TurnPlayer, RULE_MOVES), (Judge, RULE_END)],
        &[(T::Announce, "move"), (T::Announce, "end_turn")], &[],
        "the turn structure"),
    step(At::Between, "Section 5", "between turns",
        &[(NextInTurnOrder, RULE_ORDER)],
        &[(T::Announce, "turn")], &[],
        "the turn structure"),
    step(At::PendingCombat, "620-621", "Pending Combat",
        &[(TurnPlayer, "Pending Combat: Turn Player chooses which Pending Combat to resolve first")],
        &[(T::Announce, "combat")], &[],
        "Pending Combat"),
    step(At::InitialChain, "625", "Showdown Step: Initial Chain",
        &[(Focus, "625.3: Initial Chain: Player with Focus orders first")],
        &[(T::Play, "trigger"), (T::Pass, "pass")], &[K::Trigger],
        "625.3: Initial Chain"),
    step(At::Focus, "545-553", "Showdown",
        &[(Focus, RULE_SHOWDOWN)],
        &[(T::Announce, "invite"), (T::Play, "action or reaction"), (T::Pass, "pass")], &[K::Action, K::Reaction, K::ActionAbility, K::ReactionAbility],
        RULE_SHOWDOWN),
    step(At::Invited, "545-553", "Showdown: invitation",
        &[(Invited, "Relevant Players: Invited")],
        &[(T::Announce, "accept"), (T::Announce, "decline")], &[],
        "Relevant Players: Invited"),
    step(At::Chain, "545-553", "Showdown: Chain",
        &[(Reacting, RULE_CHAIN)],
        &[(T::Play, "reaction"), (T::Pass, "pass")], &[K::Reaction, K::ReactionAbility],
        RULE_CHAIN),
    step(At::Resolving, "545-553", "Showdown: Chain resolves",
        &[(PlayedIt, RULE_CHAIN), (Judge, RULE_CHAIN)],
        &[(T::Resolve, "chain_item")], &[],
        RULE_CHAIN),
    step(At::Damage, "626", "Combat Damage Step",
        &[(Assigning, RULE_DISTRIBUTE), (Judge, RULE_DISTRIBUTE)],
        &[(T::Resolve, "damage")], &[],
        "626.1: Sum Might for each side; 626.2: Distribute Damage"),
    step(At::Victory, "629-633", "Victory",
        &[],
        &[], &[],
        "Victory Scores"),
    step(At::TurnV1, "Section 5", "turn under way",
        &[(TurnPlayer, RULE_MOVES), (NextInTurnOrder, RULE_ORDER)],
        &[(T::Announce, "move"), (T::Announce, "turn")], &[],
        "the turn structure"),
];

// Each row sits at its own `At`, so that `row_at` is an index.
const _: () = {
    let mut i = 0;
    while i < STEPS.len() {
        assert!(STEPS[i].at as usize == i);
        i += 1;
    }
};

/// The row at `at`.
const fn row_at(at: At) -> &'static Step {
    &STEPS[at as usize]
}

impl Step {
    /// The rule quoted when someone other than `who` acts.
    fn rule_of(&self, who: Who) -> &'static str {
        self.who.iter().find(|(w, _)| *w == who).map_or(self.rule, |(_, r)| r)
    }
}

// ---------------------------------------------------------------------------
// Payloads.
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Action {
    Announce(Announce),
    /// A card or ability: on Focus, an action or reaction (spell or ability);
    /// on a Chain, only reactions; in the initial chain, a trigger.
    Play {
        kind: PlayKind,
        card: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        trigger: Option<Trigger>,
    },
    Pass {},
    Resolve(Resolve),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PlayKind {
    Action,
    Reaction,
    ActionAbility,
    ReactionAbility,
    Trigger,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    /// "When I attack".
    Attack,
    /// "When I defend".
    Defend,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "what", rename_all = "snake_case", deny_unknown_fields)]
pub enum Announce {
    /// The actor's turn begins (Beginning Phase: Hold scores).
    Turn {},
    /// The turn player (or a judge) ends the turn (gap 12).
    EndTurn {},
    /// The turn player moves units to a battlefield, or to base (`to` null).
    Move {
        units: Vec<UnitSpec>,
        #[serde(default)]
        to: Option<String>,
    },
    /// The turn player chooses which pending combat resolves first.
    Combat {
        battlefield: String,
    },
    /// The player with Focus invites another player into the showdown.
    Invite {
        player: String,
    },
    /// The invited player accepts (becomes relevant) or declines.
    Accept {},
    Decline {},
}

/// A unit as the table shows it; its first mention gives its Might and keywords.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UnitSpec {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub might: Option<i64>,
    /// Assault instances (each +X Might while attacking).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub assault: Vec<i64>,
    /// Shield instances (each +X Might while defending).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shield: Vec<i64>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tank: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "what", rename_all = "snake_case", deny_unknown_fields)]
pub enum Resolve {
    /// The newest chain item resolves, with the changes to units it made (gap 1).
    ChainItem {
        item: u64,
        #[serde(default)]
        changes: Vec<UnitChange>,
    },
    /// Combat damage: the Attacker's assignment, then the Defender's: the
    /// amount each unit gets, in any order (gap 6).
    Damage { assignments: Vec<Assignment> },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UnitChange {
    pub unit: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub might: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub damage: Option<i64>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dies: bool,
    /// Moves the unit to base.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub to_base: bool,
    /// Moves the unit to this battlefield (the Two-Player Limit applies).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Assignment {
    pub unit: String,
    pub damage: i64,
}

// ---------------------------------------------------------------------------
// State.
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unit {
    pub owner: String,
    pub might: i64,
    pub assault: Vec<i64>,
    pub shield: Vec<i64>,
    pub tank: bool,
    /// The battlefield it is at; None: base.
    pub at: Option<String>,
    pub damage: i64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Battlefield {
    pub controller: Option<String>,
    /// The player who applied Contested (the Attacker of its combat).
    pub contested_by: Option<String>,
    pub scored_this_turn: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Turn {
    pub player: String,
    pub number: u64,
    /// Controllers at the Beginning Phase (2v2: no Conquer of a teammate's battlefield).
    pub controlled_at_beginning: BTreeMap<String, Option<String>>,
    pub conquered: BTreeSet<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "stage")]
pub enum Stage {
    /// Combat only: "when I attack" / "when I defend" triggers go on the chain.
    InitialChain { window: Window },
    /// The player with Focus acts or passes.
    Focus { window: Window },
    /// A Chain is open: relevant players may add reactions.
    Chain { window: Window, focus: Window },
    /// The Chain resolves, newest first.
    Resolving { focus: Window, then_focus: bool },
    /// An invited player answers.
    Invited { player: String, focus: Window },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Showdown {
    pub battlefield: String,
    /// (Attacker, Defender) in a combat showdown; None without combat.
    pub combat: Option<(String, String)>,
    pub relevant: Vec<String>,
    pub chain: Chain,
    pub stage: Stage,
    /// Without combat: the player who moved in.
    pub mover: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "phase")]
pub enum Phase {
    /// No turn has begun.
    Setup,
    /// The turn player may move units, or end the turn (gap 12).
    Open,
    /// The turn player ended the turn: the next player in turn order begins the next.
    Between,
    /// Several combats are pending: the turn player chooses.
    ChooseCombat,
    Showdown(Showdown),
    /// Step 2: `assigning` assigns; the Attacker's assignment is kept until the Defender's.
    Damage {
        battlefield: String,
        attacker: String,
        defender: String,
        assigning: String,
        first: Option<Vec<Assignment>>,
    },
    /// A side reached the victory score.
    Over,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Score {
    pub seq: u64,
    pub player: String,
    pub battlefield: String,
    pub how: String,
    /// False when the final point could not be scored and the player draws
    /// a card instead, or when a teammate held the battlefield at the
    /// Beginning Phase (`teammate`).
    pub point: bool,
    /// The side's score after it.
    pub side_score: u64,
    /// A Conquer of a battlefield this teammate held at the Beginning Phase (630.1: no point).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub teammate: Option<String>,
}

/// [`State::live`]: the state with the trash and the scoring as a count and the newest.
#[derive(Serialize)]
pub struct Live<'a> {
    seats: &'a [String],
    judges: &'a [String],
    mode: &'a str,
    victory_score: u64,
    teams: &'a [Vec<String>],
    battlefields: &'a BTreeMap<String, Battlefield>,
    units: &'a BTreeMap<String, Unit>,
    trash: kernel::Tail<'a, String>,
    scores: &'a BTreeMap<String, u64>,
    scoring: kernel::Tail<'a, Score>,
    turn: &'a Option<Turn>,
    pending: &'a [String],
    phase: &'a Phase,
    winner: &'a Option<String>,
    combat_might: &'a BTreeMap<String, i64>,
    first_turn: &'a str,
}

// What replay shows changed from one state to the next (`delta::Changes`),
// member by member.
crate::changes_by_member!(Live<'_> { battlefields, combat_might, first_turn, judges, mode, pending, phase, scores, scoring, seats, teams, trash, turn, units, victory_score, winner });

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct State {
    pub seats: Vec<String>,
    pub judges: Vec<String>,
    pub mode: String,
    pub victory_score: u64,
    pub teams: Vec<Vec<String>>,
    pub battlefields: BTreeMap<String, Battlefield>,
    pub units: BTreeMap<String, Unit>,
    /// Dead units, in order.
    pub trash: Vec<String>,
    /// By player, or by team ("team1", "team2") in 2v2.
    pub scores: BTreeMap<String, u64>,
    pub scoring: Vec<Score>,
    pub turn: Option<Turn>,
    /// Battlefields with a pending combat, in the order they became pending.
    pub pending: Vec<String>,
    pub phase: Phase,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub winner: Option<String>,
    /// Each unit's Might in the combat under way (with Assault or Shield).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub combat_might: BTreeMap<String, i64>,
    /// Who takes the record's first turn: the first in turn order, or the header's `first_turn`.
    pub first_turn: String,
    /// The ruleset version the game was recorded under (see [`FOLDS`]).
    #[serde(default = "version_1")]
    pub version: u64,
}

fn version_1() -> u64 {
    1
}

pub fn open(header: &Header) -> Result<State, String> {
    let opt = |k: &str| header.options.get(k);
    let mode = opt("mode").and_then(Value::as_str).ok_or("Riftbound needs option mode: 1v1, FFA3, FFA4 or 2v2")?;
    // The text writes "FFA3/FFA4"; the lower case is kept, as the mode is named in the state.
    let (mode, players, victory_score) = match mode {
        "1v1" => ("1v1", 2, 8),
        "FFA3" | "ffa3" => ("ffa3", 3, 8),
        "FFA4" | "ffa4" => ("ffa4", 4, 8),
        "2v2" => ("2v2", 4, 11),
        m => return Err(format!("unknown Riftbound mode {m:?}: 1v1, FFA3, FFA4 or 2v2")),
    };
    let mode = mode.to_string();
    if header.seats.len() != players {
        return Err(format!("mode {mode} has {players} players, not {}", header.seats.len()));
    }
    let seats = header.seat_ids();
    let teams: Vec<Vec<String>> = if mode == "2v2" {
        let teams: Vec<Vec<String>> = opt("teams")
            .and_then(|t| serde_json::from_value(t.clone()).ok())
            .ok_or("mode 2v2 needs option teams: two lists of two seats")?;
        let mut all: Vec<&String> = teams.iter().flatten().collect();
        all.sort();
        let mut want: Vec<&String> = seats.iter().collect();
        want.sort();
        if teams.len() != 2 || teams.iter().any(|t| t.len() != 2) || all != want {
            return Err("teams must be two lists of two seats, every seat once".into());
        }
        teams
    } else {
        seats.iter().map(|s| vec![s.clone()]).collect()
    };
    let names: Vec<String> = opt("battlefields")
        .and_then(|b| serde_json::from_value(b.clone()).ok())
        .ok_or("Riftbound needs option battlefields: a list of names")?;
    if names.is_empty() || names.iter().collect::<BTreeSet<_>>().len() != names.len() {
        return Err("battlefields: at least one, each named once".into());
    }
    for n in &names {
        check_name("battlefield", n)?;
    }
    const OPTIONS: [&str; 7] = ["mode", "battlefields", "teams", "scores", "control", "units", "first_turn"];
    if let Some(k) = header.options.keys().find(|k| !OPTIONS.contains(&k.as_str())) {
        return Err(format!("unknown Riftbound option {k:?}"));
    }
    let mut state = State {
        seats,
        judges: header.judges.clone(),
        mode,
        victory_score,
        teams,
        battlefields: names.into_iter().map(|n| (n, Battlefield::default())).collect(),
        units: BTreeMap::new(),
        trash: vec![],
        scores: BTreeMap::new(),
        scoring: vec![],
        turn: None,
        pending: vec![],
        phase: Phase::Setup,
        winner: None,
        combat_might: BTreeMap::new(),
        first_turn: String::new(),
        version: header.ruleset_version,
    };
    state.scores = state.seats.iter().map(|s| (state.side(s), 0)).collect();
    state.first_turn = state.turn_order()[0].clone();
    state.set_where_the_match_stands(header)?;
    Ok(state)
}

impl State {
    /// The state with trash and scoring summarised (count and last), so that a
    /// replay's comparison of two states costs the same at event 10 and at
    /// event 100,000 (`rules::Table::live_json`).
    pub fn live(&self) -> Live<'_> {
        use crate::kernel::tail;
        Live {
            seats: &self.seats,
            judges: &self.judges,
            mode: &self.mode,
            victory_score: self.victory_score,
            teams: &self.teams,
            battlefields: &self.battlefields,
            units: &self.units,
            trash: tail(&self.trash),
            scores: &self.scores,
            scoring: tail(&self.scoring),
            turn: &self.turn,
            pending: &self.pending,
            phase: &self.phase,
            winner: &self.winner,
            combat_might: &self.combat_might,
            first_turn: &self.first_turn,
        }
    }

    /// A game recorded from the middle of a match, between two turns: the
    /// header's `scores` (by seat, or by team in 2v2), `control` (battlefield
    /// to seat), `units` at controlled battlefields (battlefield to seat to
    /// units, as a move gives them) and `first_turn`.
    fn set_where_the_match_stands(&mut self, header: &Header) -> Result<(), String> {
        let opt = |k: &str| header.options.get(k).cloned();
        if let Some(v) = opt("scores") {
            let scores: BTreeMap<String, u64> = serde_json::from_value(v)
                .map_err(|e| format!("scores: a score for each {}, e.g. {{\"p1\":3}}: {e}", self.side_word()))?;
            for (side, score) in scores {
                if !self.scores.contains_key(&side) {
                    return Err(format!("scores: {side} is not a {} of this game", self.side_word()));
                }
                if score >= self.victory_score {
                    return Err(format!("scores: {side} has {score}, but {} wins the game", self.victory_score));
                }
                self.scores.insert(side, score);
            }
        }
        if let Some(v) = opt("control") {
            let control: BTreeMap<String, String> = serde_json::from_value(v).map_err(|e| {
                format!("control: a seat for each controlled battlefield, e.g. {{\"Altar\":\"p1\"}}: {e}")
            })?;
            for (bf, seat) in control {
                if !self.seats.contains(&seat) {
                    return Err(format!("control: {seat} is not a seat"));
                }
                let b =
                    self.battlefields.get_mut(&bf).ok_or(format!("control: {bf} is not a battlefield of this game"))?;
                b.controller = Some(seat);
            }
        }
        if let Some(v) = opt("units") {
            let units: BTreeMap<String, BTreeMap<String, Vec<UnitSpec>>> = serde_json::from_value(v).map_err(|e| {
                format!("units: the units at each controlled battlefield by seat, e.g. {{\"Altar\":{{\"p1\":[{{\"name\":\"Wall\",\"might\":3}}]}}}}: {e}")
            })?;
            for (bf, by_seat) in units {
                let b = self.battlefields.get(&bf).ok_or(format!("units: {bf} is not a battlefield of this game"))?;
                // "Uncontrolled - No player has Units there"; opposing units would be a combat.
                let Some(controller) = b.controller.clone() else {
                    return Err(format!(
                        "units: {bf} is uncontrolled, so no player has units there (give its control)"
                    ));
                };
                for (seat, specs) in by_seat {
                    if !self.seats.contains(&seat) {
                        return Err(format!("units: {seat} is not a seat"));
                    }
                    if self.side(&seat) != self.side(&controller) {
                        return Err(format!(
                            "units: {seat}'s units at {controller}'s {bf} would be a combat: start the record between turns"
                        ));
                    }
                    for spec in specs {
                        if self.units.contains_key(&spec.name) {
                            return Err(format!("units: {} is named twice", spec.name));
                        }
                        let unit = new_unit(&spec, &seat, Some(bf.clone())).map_err(|m| format!("units: {m}"))?;
                        self.units.insert(spec.name.clone(), unit);
                    }
                }
            }
        }
        for (bf, b) in &self.battlefields {
            if let Some(c) = &b.controller
                && !self.occupants(bf).contains(c)
            {
                return Err(format!(
                    "control: {c} controls {bf}, so has units there (\"Lost if you have no Units there\"): give them in option units"
                ));
            }
        }
        if let Some(v) = opt("first_turn") {
            let seat: String = serde_json::from_value(v).map_err(|e| format!("first_turn: a seat: {e}"))?;
            if !self.seats.contains(&seat) {
                return Err(format!("first_turn: {seat} is not a seat"));
            }
            self.first_turn = seat;
        }
        Ok(())
    }

    /// What `scores` is kept by: a seat, or a team in 2v2.
    fn side_word(&self) -> &'static str {
        if self.mode == "2v2" { "team (team1, team2)" } else { "seat" }
    }
}

/// A unit at its first mention, with the Might and keywords the table gives.
fn new_unit(spec: &UnitSpec, owner: &str, at: Option<String>) -> Result<Unit, String> {
    check_name("unit", &spec.name)?;
    let Some(might) = spec.might else {
        return Err(format!("{} is new: give its Might", spec.name));
    };
    if might < 0 || spec.assault.iter().chain(&spec.shield).any(|x| *x < 0) {
        return Err("Might, Assault and Shield are not negative".into());
    }
    Ok(Unit {
        owner: owner.to_string(),
        might,
        assault: spec.assault.clone(),
        shield: spec.shield.clone(),
        tank: spec.tank,
        at,
        damage: 0,
    })
}

const RULE_DAMAGE: &str = "626: Units with Tank must receive lethal damage first; must assign lethal damage (damage >= Might) to a Unit before moving to the next";
const RULE_LIMIT: &str =
    "Two-Player Limit: Battlefields with Pending/In-Progress Combat are invalid destinations for others";

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

/// The trash and the scoring only grow at their end: a refused step is
/// undone by cutting them back, and everything else is copied.
impl kernel::Undo for State {
    type Mark = (State, usize, usize);
    fn mark(&self) -> Self::Mark {
        let State {
            seats,
            judges,
            mode,
            victory_score,
            teams,
            battlefields,
            units,
            trash,
            scores,
            scoring,
            turn,
            pending,
            phase,
            winner,
            combat_might,
            first_turn,
            version,
        } = self;
        let rest = State {
            seats: seats.clone(),
            judges: judges.clone(),
            mode: mode.clone(),
            victory_score: *victory_score,
            teams: teams.clone(),
            battlefields: battlefields.clone(),
            units: units.clone(),
            trash: vec![],
            scores: scores.clone(),
            scoring: vec![],
            turn: turn.clone(),
            pending: pending.clone(),
            phase: phase.clone(),
            winner: winner.clone(),
            combat_might: combat_might.clone(),
            first_turn: first_turn.clone(),
            version: *version,
        };
        (rest, trash.len(), scoring.len())
    }
    fn undo(&mut self, (rest, trash, scoring): Self::Mark) {
        let (mut t, mut s) = (std::mem::take(&mut self.trash), std::mem::take(&mut self.scoring));
        t.truncate(trash);
        s.truncate(scoring);
        *self = State { trash: t, scoring: s, ..rest };
    }
}

impl State {
    /// The scoring side of a player: the player, or its team in 2v2.
    fn side(&self, seat: &str) -> String {
        if self.mode == "2v2" {
            let i = self.teams.iter().position(|t| t.iter().any(|s| s == seat)).unwrap_or(0);
            format!("team{}", i + 1)
        } else {
            seat.to_string()
        }
    }

    fn is_judge(&self, actor: &str) -> bool {
        self.judges.iter().any(|j| j == actor)
    }

    fn turn_player(&self) -> Option<&str> {
        self.turn.as_ref().map(|t| t.player.as_str())
    }

    /// Players with living units at a battlefield.
    fn occupants(&self, bf: &str) -> BTreeSet<String> {
        self.units.values().filter(|u| u.at.as_deref() == Some(bf)).map(|u| u.owner.clone()).collect()
    }

    fn step(&mut self, seq: u64, actor: &str, action: &Action) -> Result<(), Refusal> {
        let row = self.row();
        if self.phase == Phase::Over {
            return refuse(row.rule, format!("the game is over: {} won", self.winner.clone().unwrap_or_default()));
        }
        let judge = self.is_judge(actor);
        match (self.phase.clone(), action) {
            (Phase::Setup | Phase::Between, Action::Announce(Announce::Turn {})) => self.begin_turn(seq, actor),
            // Version 1: the next player's announcement ended the turn under way.
            (Phase::Open, Action::Announce(Announce::Turn {})) if self.version == 1 => self.begin_turn(seq, actor),
            (Phase::Open, Action::Announce(Announce::Turn {})) => {
                let player = self.turn_player().unwrap_or_default();
                refuse(
                    RULE_END,
                    format!(
                        "it is {player}'s turn: {player} ends it with {{\"type\":\"announce\",\"what\":\"end_turn\"}} (or a judge does), then {} begins the next",
                        self.next_turn()
                    ),
                )
            }
            (Phase::Open, Action::Announce(Announce::EndTurn {})) if self.version >= 2 => {
                let player = self.turn_player().unwrap_or_default().to_string();
                if actor != player && !judge {
                    return refuse(
                        row.rule_of(Judge),
                        format!("{player} ends their own turn, or a judge does; not {actor}"),
                    );
                }
                self.phase = Phase::Between;
                Ok(())
            }
            (Phase::Setup | Phase::Open | Phase::Between, Action::Announce(Announce::Move { units, to })) => {
                self.move_units(seq, actor, units, to.as_deref())
            }
            (Phase::ChooseCombat, Action::Announce(Announce::Combat { battlefield })) => {
                if Some(actor) != self.turn_player() {
                    return refuse(row.rule_of(TurnPlayer), format!("{actor} is not the turn player"));
                }
                if !self.pending.contains(battlefield) {
                    return refuse(row.rule, format!("no combat is pending at {battlefield}: {:?}", self.pending));
                }
                self.start_combat(battlefield);
                Ok(())
            }
            (Phase::Showdown(sd), _) => self.showdown(seq, actor, judge, sd, action),
            (
                Phase::Damage { battlefield, attacker, defender, assigning, first },
                Action::Resolve(Resolve::Damage { assignments }),
            ) => {
                if actor != assigning && !judge {
                    return refuse(row.rule_of(Assigning), format!("{assigning} assigns damage now, not {actor}"));
                }
                let target = if assigning == attacker { &defender } else { &attacker };
                // The amounts are what the table may type: a refusal names them.
                self.check_assignment(&battlefield, &assigning, target, assignments)
                    .map_err(|(rule, m)| (rule, format!("assignments: {m}")))?;
                match first {
                    None => {
                        self.phase = Phase::Damage {
                            battlefield,
                            attacker,
                            assigning: defender.clone(),
                            defender,
                            first: Some(assignments.clone()),
                        };
                    }
                    Some(first) => {
                        for a in first.iter().chain(assignments) {
                            self.units.get_mut(&a.unit).expect("unit").damage += a.damage;
                        }
                        self.resolve_combat(seq, &battlefield, &attacker, &defender);
                    }
                }
                Ok(())
            }
            _ => {
                let view = self.view();
                let legal: Vec<_> = view.legal.iter().map(|t| t.name()).collect();
                // What no row of this phase takes is out of the turn structure.
                refuse(
                    row_at(At::Turn).rule,
                    format!("not legal now: the next action is {} by {}", legal.join(" or "), view.may_act.join(", ")),
                )
            }
        }
    }

    /// The order turns pass in (gap 10): seat order; in 2v2 the teams alternate.
    pub fn turn_order(&self) -> Vec<String> {
        if self.mode == "2v2" {
            (0..2).flat_map(|i| self.teams.iter().map(move |t| t[i].clone())).collect()
        } else {
            self.seats.clone()
        }
    }

    /// The player whose turn comes next.
    pub fn next_turn(&self) -> String {
        let order = self.turn_order();
        match self.turn_player() {
            None => self.first_turn.clone(),
            Some(p) => rotate_after(&order, p)[0].clone(),
        }
    }

    fn begin_turn(&mut self, seq: u64, actor: &str) -> Result<(), Refusal> {
        let next = self.next_turn();
        if actor != next {
            return refuse(
                row_at(At::Between).rule_of(NextInTurnOrder),
                format!("it is {next}'s turn next, not {actor}'s (turn order: {})", self.turn_order().join(", ")),
            );
        }
        let number = self.turn.as_ref().map_or(1, |t| t.number + 1);
        for bf in self.battlefields.values_mut() {
            bf.scored_this_turn = false;
        }
        self.turn = Some(Turn {
            player: actor.to_string(),
            number,
            controlled_at_beginning: self.battlefields.iter().map(|(n, b)| (n.clone(), b.controller.clone())).collect(),
            conquered: BTreeSet::new(),
        });
        self.phase = Phase::Open;
        // Hold (630.2): control a Battlefield during your Beginning Phase.
        let held: Vec<String> = self
            .battlefields
            .iter()
            .filter(|(_, b)| b.controller.as_deref() == Some(actor))
            .map(|(n, _)| n.clone())
            .collect();
        for bf in held {
            self.score(seq, actor, &bf, "hold");
        }
        Ok(())
    }

    fn move_units(&mut self, seq: u64, actor: &str, units: &[UnitSpec], to: Option<&str>) -> Result<(), Refusal> {
        let rule = row_at(At::Turn).rule_of(TurnPlayer);
        if self.phase == Phase::Between {
            let player = self.turn_player().unwrap_or_default();
            return refuse(RULE_END, format!("{player}'s turn is over: {} begins the next turn", self.next_turn()));
        }
        if Some(actor) != self.turn_player() {
            return refuse(
                rule,
                match self.turn_player() {
                    Some(p) => format!("it is {p}'s turn"),
                    None => {
                        "it is no one's turn: a player begins one with {\"type\":\"announce\",\"what\":\"turn\"}".into()
                    }
                },
            );
        }
        if units.is_empty() {
            return refuse(rule, "move at least one unit");
        }
        if let Some(bf) = to {
            if !self.battlefields.contains_key(bf) {
                return refuse(rule, format!("{bf} is not a battlefield of this game"));
            }
            self.may_enter(actor, bf)?;
        }
        // The units are what the table types: each refusal about one names `units`.
        let mut seen = BTreeSet::new();
        for spec in units {
            if !seen.insert(spec.name.clone()) {
                return refuse(rule, format!("units: {} is named twice", spec.name));
            }
            check_name("unit", &spec.name).or_else(|m| refuse(rule, format!("units: {m}")))?;
            match self.units.get(&spec.name) {
                Some(u) if u.owner != actor => {
                    return refuse(rule, format!("units: {} is {}'s unit", spec.name, u.owner));
                }
                Some(u) if spec.might.is_some_and(|m| m != u.might) => {
                    return refuse(rule, format!("units: {} has Might {}", spec.name, u.might));
                }
                // A move there would move nothing.
                Some(u) if u.at.as_deref() == to => {
                    return refuse(rule, format!("units: {} is already at {}", spec.name, to.unwrap_or("base")));
                }
                Some(_) => {}
                None => {
                    if self.trash.contains(&spec.name) {
                        return refuse(rule, format!("units: {} is dead", spec.name));
                    }
                    let unit = new_unit(spec, actor, None).or_else(|m| refuse(rule, format!("units: {m}")))?;
                    self.units.insert(spec.name.clone(), unit);
                }
            }
        }
        let from: BTreeSet<String> = units.iter().filter_map(|s| self.units[&s.name].at.clone()).collect();
        for spec in units {
            self.units.get_mut(&spec.name).expect("unit").at = to.map(str::to_string);
        }
        for bf in from {
            self.settle_control(seq, &bf);
        }
        if self.phase == Phase::Over {
            return Ok(());
        }
        if let Some(bf) = to {
            let b = &self.battlefields[bf];
            let opposing = self.contests(actor, bf);
            if opposing && b.contested_by.is_none() {
                // Opposing units just arrived: Contested, applied by the mover.
                self.battlefields.get_mut(bf).expect("bf").contested_by = Some(actor.to_string());
            } else if !opposing && b.controller.is_none() {
                // Without Combat: units move to an uncontrolled Battlefield.
                let relevant = rotate_from(&self.seats, actor);
                self.phase = Phase::Showdown(Showdown {
                    battlefield: bf.to_string(),
                    combat: None,
                    relevant: relevant.clone(),
                    chain: Chain::default(),
                    stage: Stage::Focus { window: Window::new(relevant) },
                    mover: actor.to_string(),
                });
                return Ok(());
            }
        }
        self.cleanup(seq);
        Ok(())
    }

    /// Whether `player`'s units may go to the battlefield `bf` (a move, or a
    /// card's): not into a combat of two other players (the Two-Player
    /// Limit), nor where two opponents already have units.
    fn may_enter(&self, player: &str, bf: &str) -> Result<(), Refusal> {
        if let Some((a, d)) = self.combat_players(bf)
            && player != a
            && player != d
        {
            return refuse(RULE_LIMIT, format!("{bf} has a pending or ongoing combat between {a} and {d}"));
        }
        let opposing: BTreeSet<String> =
            self.occupants(bf).into_iter().filter(|p| self.side(p) != self.side(player)).collect();
        if opposing.len() > 1 {
            return refuse(
                "Combat is ALWAYS between exactly two players",
                format!("{bf} already holds units of {opposing:?}"),
            );
        }
        Ok(())
    }

    /// Whether `player`'s units arriving at `bf` contest it: an opponent has
    /// units there, or controls it with none there (after a combat that left
    /// neither side, "No control change"). Then there is no combat
    /// ("Combat occurs (if defender has Units)"), and the Cleanup gives the
    /// battlefield to the player there (`settle_control`).
    fn contests(&self, player: &str, bf: &str) -> bool {
        let opponent = |p: &String| self.side(p) != self.side(player);
        self.occupants(bf).iter().any(opponent) || self.battlefields[bf].controller.as_ref().is_some_and(opponent)
    }

    /// The two players of a pending or ongoing combat at `bf`.
    fn combat_players(&self, bf: &str) -> Option<(String, String)> {
        if let Phase::Showdown(Showdown { battlefield, combat: Some(c), .. }) = &self.phase
            && battlefield == bf
        {
            return Some(c.clone());
        }
        if let Phase::Damage { battlefield, attacker, defender, .. } = &self.phase
            && battlefield == bf
        {
            return Some((attacker.clone(), defender.clone()));
        }
        let b = &self.battlefields[bf];
        let attacker = b.contested_by.clone()?;
        let defender = self.occupants(bf).into_iter().find(|p| self.side(p) != self.side(&attacker))?;
        Some((attacker, defender))
    }

    /// Units left or died at `bf` outside combat (gap 5): control is "Lost
    /// if you have no Units there", but "Maintained while Contested by
    /// opponent"; a player who still has units there controls it
    /// ("Controlled - A player has Units there"), which is a Conquer; with
    /// no one there it is uncontrolled.
    fn settle_control(&mut self, seq: u64, bf: &str) {
        let b = &self.battlefields[bf];
        let Some(controller) = b.controller.clone() else { return };
        let occupants = self.occupants(bf);
        if b.contested_by.is_some() || occupants.contains(&controller) {
            return;
        }
        // Outside a contest at most one player's units are left: an opponent's
        // arrival contests a battlefield, and only the controller's teammate
        // (2v2) shares it uncontested.
        let remaining = occupants.into_iter().next();
        self.battlefields.get_mut(bf).expect("bf").controller = remaining.clone();
        if let Some(player) = remaining {
            self.conquer(seq, &player, bf);
        }
    }

    /// A Cleanup with an empty Chain: pending combats are found; one starts,
    /// or the turn player chooses.
    fn cleanup(&mut self, seq: u64) {
        let mut pending: Vec<String> = self.pending.clone();
        for (name, b) in &self.battlefields {
            if b.contested_by.is_some() && !pending.contains(name) {
                pending.push(name.clone());
            }
        }
        // "If conditions change before steps begin, Combat doesn't happen."
        let still: Vec<String> = pending.into_iter().filter(|bf| self.combat_players(bf).is_some()).collect();
        let dropped: Vec<String> = self
            .battlefields
            .iter()
            .filter(|(name, b)| b.contested_by.is_some() && !still.contains(name))
            .map(|(name, _)| name.clone())
            .collect();
        self.pending = still;
        for bf in dropped {
            self.battlefields.get_mut(&bf).expect("bf").contested_by = None;
            // The defender's units are gone: control is no longer maintained.
            self.settle_control(seq, &bf);
        }
        if self.phase == Phase::Over {
            return;
        }
        self.phase = match self.pending.len() {
            0 => Phase::Open,
            1 => {
                let bf = self.pending[0].clone();
                self.start_combat(&bf);
                return;
            }
            _ => Phase::ChooseCombat,
        };
    }

    /// Step 1: roles, combat modifiers, then the initial chain.
    fn start_combat(&mut self, bf: &str) {
        let (attacker, defender) = self.combat_players(bf).expect("a pending combat has two players");
        self.pending.retain(|p| p != bf);
        self.combat_might.clear();
        for (name, u) in &self.units {
            if u.at.as_deref() == Some(bf) {
                let bonus: i64 = if u.owner == attacker { u.assault.iter().sum() } else { u.shield.iter().sum() };
                self.combat_might.insert(name.clone(), u.might + bonus);
            }
        }
        let relevant = vec![attacker.clone(), defender.clone()];
        self.phase = Phase::Showdown(Showdown {
            battlefield: bf.to_string(),
            combat: Some((attacker.clone(), defender)),
            relevant: relevant.clone(),
            chain: Chain::default(),
            stage: Stage::InitialChain { window: Window::new(relevant) },
            mover: attacker,
        });
    }

    fn showdown(
        &mut self,
        seq: u64,
        actor: &str,
        judge: bool,
        mut sd: Showdown,
        action: &Action,
    ) -> Result<(), Refusal> {
        let row = sd.stage.row();
        match (sd.stage.clone(), action) {
            (Stage::InitialChain { mut window }, _) => {
                let holder = window.holder().unwrap_or_default().to_string();
                if actor != holder {
                    return refuse(row.rule_of(Focus), format!("it is {holder}'s turn to add a trigger or pass"));
                }
                match action {
                    Action::Pass {} => window.pass(),
                    Action::Play { kind, card, trigger: Some(t) } if row.plays.contains(kind) => {
                        let want = sd.trigger_of(actor);
                        if *t != want {
                            return refuse(
                                "625.3: \"When I attack\" triggers, \"When I defend\" triggers",
                                format!(
                                    "the {} puts \"when I {}\" triggers on the chain",
                                    if want == Trigger::Attack { "Attacker" } else { "Defender" },
                                    if want == Trigger::Attack { "attack" } else { "defend" }
                                ),
                            );
                        }
                        check_name("card", card).or_else(|m| refuse(row_at(At::Chain).rule, m))?;
                        sd.chain.push(ChainItem {
                            seq,
                            seat: actor.to_string(),
                            card: card.clone(),
                            kind: kind_name(*kind).into(),
                        });
                        window.played();
                    }
                    _ => {
                        return refuse(
                            row.rule,
                            "the initial chain takes \"when I attack\" / \"when I defend\" triggers (play, kind trigger), or a pass",
                        );
                    }
                }
                let focus = Window::new(sd.relevant.clone());
                sd.stage = if !window.is_closed() {
                    Stage::InitialChain { window }
                } else if sd.chain.is_empty() {
                    Stage::Focus { window: focus }
                } else {
                    Stage::Resolving { focus, then_focus: false }
                };
            }
            (Stage::Focus { mut window }, _) => {
                let holder = window.holder().unwrap_or_default().to_string();
                if actor != holder {
                    return refuse(row.rule_of(Focus), format!("{holder} has Focus, not {actor}"));
                }
                match action {
                    Action::Pass {} => {
                        window.pass();
                        if window.is_closed() {
                            return self.end_showdown(seq, sd);
                        }
                        sd.stage = Stage::Focus { window };
                    }
                    Action::Play { kind, card, trigger: None } if row.plays.contains(kind) => {
                        check_name("card", card).or_else(|m| refuse(row.rule, m))?;
                        sd.chain.push(ChainItem {
                            seq,
                            seat: actor.to_string(),
                            card: card.clone(),
                            kind: kind_name(*kind).into(),
                        });
                        let others = rotate_after(&sd.relevant, actor);
                        sd.stage = Stage::Chain { window: Window::new(others), focus: window };
                    }
                    Action::Announce(Announce::Invite { player }) => {
                        if !self.invitable(&sd).contains(player) {
                            return refuse(
                                "Relevant Players: Invited: Players who accept invitation",
                                format!("{player} is not a player outside the showdown"),
                            );
                        }
                        sd.stage = Stage::Invited { player: player.clone(), focus: window };
                    }
                    _ => {
                        return refuse(
                            row.rule,
                            "with Focus: play an Action or Reaction, activate an ability, invite a player, or pass",
                        );
                    }
                }
            }
            (Stage::Invited { player, focus }, _) => {
                if actor != player {
                    return refuse(row.rule_of(Invited), format!("{player} answers the invitation"));
                }
                match action {
                    Action::Announce(Announce::Accept {}) => sd.relevant.push(player.clone()),
                    Action::Announce(Announce::Decline {}) => {}
                    _ => return refuse(row.rule, "accept or decline the invitation"),
                }
                // The invitation was the inviter's action: Focus moves on, and
                // every relevant player (the new one too) gets a chance again.
                let inviter = focus.holder().unwrap_or_default().to_string();
                sd.stage = Stage::Focus { window: Window::new(rotate_after(&sd.relevant, &inviter)) };
            }
            (Stage::Chain { mut window, focus }, _) => {
                let holder = window.holder().unwrap_or_default().to_string();
                if actor != holder {
                    return refuse(row.rule_of(Reacting), format!("it is {holder}'s chance to react or pass"));
                }
                match action {
                    Action::Pass {} => window.pass(),
                    Action::Play { kind, card, trigger: None } if row.plays.contains(kind) => {
                        check_name("card", card).or_else(|m| refuse(row.rule, m))?;
                        let kind = *kind;
                        sd.chain.push(ChainItem {
                            seq,
                            seat: actor.to_string(),
                            card: card.clone(),
                            kind: kind_name(kind).into(),
                        });
                        window = Window::new(rotate_after(&sd.relevant, actor));
                    }
                    _ => return refuse(row.rule, "while a Chain is open only Reactions may be added"),
                }
                sd.stage = if window.is_closed() {
                    Stage::Resolving { focus, then_focus: true }
                } else {
                    Stage::Chain { window, focus }
                };
            }
            (Stage::Resolving { mut focus, then_focus }, Action::Resolve(Resolve::ChainItem { item, changes })) => {
                let newest = sd.chain.newest().cloned().expect("a chain to resolve");
                if *item != newest.seq {
                    return refuse(
                        row.rule,
                        format!("the Chain resolves newest first: seq {} ({}) is next", newest.seq, newest.card),
                    );
                }
                if actor != newest.seat && !judge {
                    return refuse(
                        row.rule_of(PlayedIt),
                        format!("{} (who played it) or a judge records how {} resolves", newest.seat, newest.card),
                    );
                }
                // The changes are what the table types: a refusal names them.
                self.apply_changes(seq, changes).map_err(|(rule, m)| (rule, format!("changes: {m}")))?;
                if self.phase == Phase::Over {
                    // A Conquer elsewhere won the game (gap 5).
                    return Ok(());
                }
                sd.chain.pop();
                if sd.chain.is_empty() {
                    if then_focus {
                        // "Focus passes when Chain resolves": to the player after the one who had it.
                        focus.played();
                    }
                    sd.stage = Stage::Focus { window: focus };
                } else {
                    sd.stage = Stage::Resolving { focus, then_focus };
                }
            }
            _ => {
                return refuse(
                    row.rule,
                    "the Chain is resolving: record its newest item's resolution (resolve chain_item)",
                );
            }
        }
        self.phase = Phase::Showdown(sd);
        Ok(())
    }

    fn apply_changes(&mut self, seq: u64, changes: &[UnitChange]) -> Result<(), Refusal> {
        const RULE: &str = "gap 1 (module docs): the table records what a chain item did";
        // Battlefields units left or died at.
        let mut left = BTreeSet::new();
        for c in changes {
            let Some((owner, at)) = self.units.get(&c.unit).map(|u| (u.owner.clone(), u.at.clone())) else {
                return refuse(RULE, format!("{} is not a unit in play", c.unit));
            };
            // A change that would move a unit where it stands would move nothing.
            if let Some(here) = (c.to.as_ref().filter(|bf| at.as_ref() == Some(*bf)))
                .map(String::as_str)
                .or((c.to_base && at.is_none()).then_some("base"))
            {
                return refuse(RULE, format!("{} is already at {here}", c.unit));
            }
            if (c.dies || c.to_base || c.to.is_some())
                && let Some(at) = at
            {
                left.insert(at);
            }
            if let Some(bf) = &c.to {
                if !self.battlefields.contains_key(bf) {
                    return refuse(RULE, format!("{bf} is not a battlefield of this game"));
                }
                self.may_enter(&owner, bf)?;
                if self.occupants(bf).is_empty() && self.battlefields[bf].controller.is_none() {
                    return refuse(
                        "gap 9 (module docs)",
                        "a card moving units to an uncontrolled battlefield during a showdown would open another showdown; the text does not say when: record the move after this showdown",
                    );
                }
                if let Phase::Showdown(Showdown { battlefield, combat: Some(_), .. }) = &self.phase
                    && battlefield == bf
                    && self.units.get(&c.unit).is_some_and(|u| u.at.as_deref() != Some(bf.as_str()))
                {
                    return refuse(
                        "gap 11 (module docs)",
                        format!(
                            "{} would join the combat at {bf} under way; the text applies Assault and Shield to the units there when the combat begins (625.2) and does not say whether a unit arriving later is attacking or defending: record the move after the combat",
                            c.unit
                        ),
                    );
                }
                if self.contests(&owner, bf) && self.battlefields[bf].contested_by.is_none() {
                    self.battlefields.get_mut(bf).expect("bf").contested_by = Some(owner.clone());
                    // Pending from now: the Two-Player Limit holds for it, and
                    // the board lists it; it begins at the next Cleanup, unless
                    // its conditions change before.
                    if !self.pending.contains(bf) {
                        self.pending.push(bf.clone());
                    }
                }
            }
            let u = self.units.get_mut(&c.unit).expect("unit");
            if let Some(bf) = &c.to {
                u.at = Some(bf.clone());
            }
            if c.might.is_some_and(|m| m < 0) || c.damage.is_some_and(|d| d < 0) {
                return refuse(RULE, "Might and damage are not negative");
            }
            if let Some(m) = c.might {
                let delta = m - u.might;
                u.might = m;
                if let Some(cm) = self.combat_might.get_mut(&c.unit) {
                    *cm += delta;
                }
            }
            if let Some(d) = c.damage {
                u.damage = d;
            }
            if c.to_base {
                u.at = None;
            }
            if c.dies {
                self.units.remove(&c.unit);
                self.combat_might.remove(&c.unit);
                self.trash.push(c.unit.clone());
            }
        }
        for bf in left {
            self.settle_control(seq, &bf);
        }
        Ok(())
    }

    /// All relevant players passed in sequence with an empty chain.
    fn end_showdown(&mut self, seq: u64, sd: Showdown) -> Result<(), Refusal> {
        let bf = sd.battlefield.clone();
        match sd.combat {
            None => {
                // "A Showdown occurs (no Combat), then you control it."
                if self.occupants(&bf).contains(&sd.mover) {
                    self.battlefields.get_mut(&bf).expect("bf").controller = Some(sd.mover.clone());
                    self.conquer(seq, &sd.mover, &bf);
                }
                self.cleanup(seq);
            }
            Some((attacker, defender)) => {
                let occupants = self.occupants(&bf);
                if occupants.contains(&attacker) && occupants.contains(&defender) {
                    self.phase = Phase::Damage {
                        battlefield: bf,
                        attacker: attacker.clone(),
                        defender,
                        assigning: attacker,
                        first: None,
                    };
                } else {
                    self.resolve_combat(seq, &bf, &attacker, &defender);
                }
            }
        }
        Ok(())
    }

    /// "Sum Might for each side" (626.1): `owner`'s units at `bf`, each with
    /// the Might it has in this combat (with Assault or Shield). A unit can
    /// only be there with its combat Might: a card that would bring one in
    /// during the combat is refused (gap 11).
    pub fn side_might(&self, bf: &str, owner: &str) -> i64 {
        self.units
            .iter()
            .filter(|(_, u)| u.owner == owner && u.at.as_deref() == Some(bf))
            .map(|(n, u)| self.combat_might.get(n).copied().unwrap_or(u.might))
            .sum()
    }

    fn lethal(&self, unit: &str) -> i64 {
        let might = self.combat_might.get(unit).copied().unwrap_or(self.units[unit].might);
        (might - self.units[unit].damage).max(0)
    }

    /// The whole of a side's Might goes to the other side's units: Tanks
    /// first, each unit lethal before the next. The amounts are checked as a
    /// set, so the order of listing does not matter (gap 6): the assignment
    /// is legal when the units can be reached in some order that keeps the
    /// rule, that is, when at most one unit (the last reached) gets less than
    /// lethal, and no unit without Tank gets damage while a Tank has less.
    fn check_assignment(&self, bf: &str, by: &str, target: &str, list: &[Assignment]) -> Result<(), Refusal> {
        let total = self.side_might(bf, by);
        let targets: BTreeMap<&String, &Unit> =
            self.units.iter().filter(|(_, u)| u.owner == target && u.at.as_deref() == Some(bf)).collect();
        let assigned: i64 = list.iter().map(|a| a.damage).sum();
        if assigned != total || list.iter().any(|a| a.damage <= 0) {
            return refuse(
                row_at(At::Damage).rule,
                format!(
                    "{by}'s units have {total} Might in all: assign exactly {total}, each amount positive (assigned {assigned})"
                ),
            );
        }
        let mut damage: BTreeMap<&String, i64> = BTreeMap::new();
        for a in list {
            if !targets.contains_key(&a.unit) {
                return refuse(RULE_DAMAGE, format!("{} is not a unit of {target} at {bf}", a.unit));
            }
            if damage.insert(&a.unit, a.damage).is_some() {
                return refuse(RULE_DAMAGE, format!("{} is listed twice: assign its damage at once", a.unit));
            }
        }
        let short: Vec<String> = damage
            .iter()
            .filter(|(u, d)| **d < self.lethal(u))
            .map(|(u, d)| format!("{u} gets {d} but lethal is {}", self.lethal(u)))
            .collect();
        if short.len() > 1 {
            return refuse(
                RULE_DAMAGE,
                format!(
                    "{}: damage moves on from a unit only once it has lethal damage, so only the last unit reached may get less",
                    short.join(", ")
                ),
            );
        }
        if let Some(hit) = damage.keys().find(|u| !targets[*u].tank)
            && let Some(tank) = targets
                .iter()
                .find(|(u, t)| t.tank && damage.get(*u).copied().unwrap_or(0) < self.lethal(u))
                .map(|(u, _)| u)
        {
            return refuse(
                "Tank: must be assigned lethal damage first",
                format!("{hit} gets damage while Tank {tank} has less than lethal damage"),
            );
        }
        Ok(())
    }

    /// Step 3: kill, the outcome table, clear Contested, clear all damage.
    fn resolve_combat(&mut self, seq: u64, bf: &str, attacker: &str, defender: &str) {
        let dead: Vec<String> = self
            .units
            .iter()
            .filter(|(n, u)| {
                u.at.as_deref() == Some(bf) && u.damage >= self.combat_might.get(*n).copied().unwrap_or(u.might)
            })
            .map(|(n, _)| n.clone())
            .collect();
        for n in dead {
            self.units.remove(&n);
            self.trash.push(n);
        }
        let occupants = self.occupants(bf);
        let (a, d) = (occupants.contains(attacker), occupants.contains(defender));
        match (a, d) {
            // Both sides: Attackers Recalled to Base.
            (true, true) => {
                for u in self.units.values_mut() {
                    if u.owner == attacker && u.at.as_deref() == Some(bf) {
                        u.at = None;
                    }
                }
                self.battlefields.get_mut(bf).expect("bf").controller = Some(defender.to_string());
            }
            // Only Attackers: Battlefield Conquered.
            (true, false) => {
                self.battlefields.get_mut(bf).expect("bf").controller = Some(attacker.to_string());
                self.conquer(seq, attacker, bf);
            }
            // Only Defenders: Defenders keep control.
            (false, true) => self.battlefields.get_mut(bf).expect("bf").controller = Some(defender.to_string()),
            // Neither: the text answers this case twice (gap 5): the outcome
            // table's "Neither | No control change", and the FAQ "What if all
            // Units die in Combat? No control change occurs". The controller
            // keeps it, although it has no units there.
            (false, false) => {}
        }
        self.battlefields.get_mut(bf).expect("bf").contested_by = None;
        for u in self.units.values_mut() {
            u.damage = 0;
        }
        self.combat_might.clear();
        if self.phase != Phase::Over {
            self.cleanup(seq);
        }
    }

    fn conquer(&mut self, seq: u64, player: &str, bf: &str) {
        if let Some(t) = self.turn.as_mut() {
            t.conquered.insert(bf.to_string());
        }
        // 630.1, team modes: not a battlefield a teammate controlled at the
        // Beginning Phase. Nothing is scored, and the record says why.
        let teammate = self
            .turn
            .as_ref()
            .and_then(|t| t.controlled_at_beginning.get(bf).cloned().flatten())
            .filter(|c| c != player && self.side(c) == self.side(player));
        match teammate {
            None => self.score(seq, player, bf, "conquer"),
            Some(teammate) => {
                let side_score = self.scores.get(&self.side(player)).copied().unwrap_or(0);
                self.scoring.push(Score {
                    seq,
                    player: player.to_string(),
                    battlefield: bf.to_string(),
                    how: "conquer".into(),
                    point: false,
                    side_score,
                    teammate: Some(teammate),
                });
            }
        }
    }

    /// One point, at most once per battlefield per turn, with the final point rules.
    fn score(&mut self, seq: u64, player: &str, bf: &str, how: &str) {
        if self.battlefields[bf].scored_this_turn {
            return;
        }
        self.battlefields.get_mut(bf).expect("bf").scored_this_turn = true;
        let side = self.side(player);
        let current = self.scores.get(&side).copied().unwrap_or(0);
        let final_point = current + 1 == self.victory_score;
        let conquered_all =
            self.turn.as_ref().is_some_and(|t| self.battlefields.keys().all(|b| t.conquered.contains(b)));
        // "Conquer but not all: Draw a card instead".
        let point = !final_point || how == "hold" || conquered_all;
        let score = if point { current + 1 } else { current };
        self.scoring.push(Score {
            seq,
            player: player.to_string(),
            battlefield: bf.to_string(),
            how: how.to_string(),
            point,
            side_score: score,
            teammate: None,
        });
        if point {
            self.scores.insert(side.clone(), score);
            if score >= self.victory_score {
                self.winner = Some(side);
                self.phase = Phase::Over;
            }
        }
    }

    pub fn view(&self) -> View {
        let row = self.row();
        // The turn rows' number is a section the text refers to but does not include.
        let reference = if row.no.starts_with("Section") {
            format!("Riftbound {} (Turn Structure: {} of the Core Rules)", row.title, row.no)
        } else {
            format!("Riftbound {} ({})", row.title, row.no)
        };
        let step = StepRef { number: row.no.into(), title: row.title.into(), reference };
        let may_act = self.actors();
        // An invitation needs a player outside the showdown.
        let no_one_to_invite = matches!(&self.phase, Phase::Showdown(sd) if self.invitable(sd).is_empty());
        let mut legal = vec![];
        for (t, what) in row.may {
            let offered = !(*what == "invite" && no_one_to_invite);
            if offered && !legal.contains(t) {
                legal.push(*t);
            }
        }
        // The text answers every case this ruleset reaches: no ruling is awaited.
        View { step, may_act, legal, awaiting_ruling: None }
    }

    /// Who may act now: the seats (and judges) the roles of the current row
    /// name, in the row's order, each once.
    fn actors(&self) -> Vec<String> {
        let mut actors: Vec<String> = vec![];
        for (who, _) in self.row().who {
            let seats = match self.seat_of(*who) {
                Some(seat) => vec![seat],
                None if *who == Judge => self.judges.clone(),
                None => vec![],
            };
            for seat in seats {
                if !actors.contains(&seat) {
                    actors.push(seat);
                }
            }
        }
        actors
    }

    /// The seat a role of the step table names now (none for the judges).
    fn seat_of(&self, who: Who) -> Option<String> {
        let holder = |w: &Window| w.holder().map(str::to_string);
        match (who, &self.phase) {
            (Judge, _) => None,
            (TurnPlayer, _) => self.turn_player().map(str::to_string),
            (NextInTurnOrder, _) => Some(self.next_turn()),
            (Assigning, Phase::Damage { assigning, .. }) => Some(assigning.clone()),
            (_, Phase::Showdown(sd)) => match (who, &sd.stage) {
                (Focus, Stage::InitialChain { window } | Stage::Focus { window }) => holder(window),
                (Reacting, Stage::Chain { window, .. }) => holder(window),
                (Invited, Stage::Invited { player, .. }) => Some(player.clone()),
                (PlayedIt, Stage::Resolving { .. }) => sd.chain.newest().map(|i| i.seat.clone()),
                _ => None,
            },
            _ => None,
        }
    }
}

impl State {
    /// The row of the step table the game is at.
    fn row(&self) -> &'static Step {
        row_at(match &self.phase {
            Phase::Setup | Phase::Between => At::Between,
            Phase::Open if self.version == 1 => At::TurnV1,
            Phase::Open => At::Turn,
            Phase::ChooseCombat => At::PendingCombat,
            Phase::Showdown(sd) => return sd.stage.row(),
            Phase::Damage { .. } => At::Damage,
            Phase::Over => At::Victory,
        })
    }
}

impl Stage {
    /// The row of the step table this stage of a showdown is at.
    fn row(&self) -> &'static Step {
        row_at(match self {
            Stage::InitialChain { .. } => At::InitialChain,
            Stage::Focus { .. } => At::Focus,
            Stage::Invited { .. } => At::Invited,
            Stage::Chain { .. } => At::Chain,
            Stage::Resolving { .. } => At::Resolving,
        })
    }
}

impl Showdown {
    /// The initial chain's triggers (625.3): the Attacker's "when I attack",
    /// the Defender's "when I defend".
    fn trigger_of(&self, player: &str) -> Trigger {
        match &self.combat {
            Some((attacker, _)) if attacker == player => Trigger::Attack,
            _ => Trigger::Defend,
        }
    }
}

impl State {
    /// The players the player with Focus may invite: those outside the showdown.
    fn invitable(&self, sd: &Showdown) -> Vec<String> {
        self.seats.iter().filter(|p| !sd.relevant.contains(p)).cloned().collect()
    }
}

fn kind_name(kind: PlayKind) -> &'static str {
    match kind {
        PlayKind::Action => "action",
        PlayKind::Reaction => "reaction",
        PlayKind::ActionAbility => "action_ability",
        PlayKind::ReactionAbility => "reaction_ability",
        PlayKind::Trigger => "trigger",
    }
}

/// The players in order, starting with `player`.
fn rotate_from(order: &[String], player: &str) -> Vec<String> {
    let i = order.iter().position(|p| p == player).unwrap_or(0);
    order[i..].iter().chain(&order[..i]).cloned().collect()
}

/// The players in order, starting with the one after `player`, ending with `player`.
fn rotate_after(order: &[String], player: &str) -> Vec<String> {
    let mut v = rotate_from(order, player);
    if order.iter().any(|p| p == player) {
        v.rotate_left(1);
    }
    v
}

/// The scores the event at `seq` made, in words and the players' names.
pub fn said(state: &State, header: &Header, seq: u64) -> Vec<String> {
    state.scoring.iter().filter(|s| s.seq == seq).map(|s| score_words(state, header, s)).collect()
}

/// A score in words: "Alice (p1) scores a point: conquered Altar (1 of 8)";
/// a final point drawn as a card instead; a teammate's battlefield, no point.
pub fn score_words(state: &State, header: &Header, s: &Score) -> String {
    let (player, bf) = (header.name_of(&s.player), &s.battlefield);
    if let Some(teammate) = &s.teammate {
        return format!("no point: {bf} was held by teammate {} at the Beginning Phase", header.name_of(teammate));
    }
    // In 2v2 the score is the team's.
    let tally = match state.mode.as_str() {
        "2v2" => format!("{}: {} of {}", state.side(&s.player), s.side_score, state.victory_score),
        _ => format!("{} of {}", s.side_score, state.victory_score),
    };
    let done = if s.how == "hold" { "held" } else { "conquered" };
    if s.point {
        format!("{player} scores a point: {done} {bf} ({tally})")
    } else {
        format!(
            "final point: {player} draws a card instead of scoring: conquered {bf}, but not every battlefield this turn ({tally})"
        )
    }
}
