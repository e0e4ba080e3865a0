//! WWE Raw Deal: the timing breakdown of a card play, steps 1 to 9e
//! (`shared/rules/rawdeal-timing-breakdown.txt`).
//!
//! Every card played runs the breakdown in [`STEPS`]; a reversal runs its own
//! complete breakdown on top of the one it reverses, so the state is a stack
//! of breakdowns (which card, which step, whose priority). The steps the
//! text numbers but where no one records anything are taken by the reducer:
//! 1a is the `play` itself; 2d ends the sequence when 2a-2c are not met (the
//! card stays where it was and does not count as played); 5c ends it when
//! the card was completely reversed; 6 puts a successfully played card in the
//! Ring Area, or (6a) leaves it for its own destination at step 8.
//!
//! # Arithmetic
//! 2a (cost), 3a, 4 and 9a (damage) apply modifiers in the text's order: the
//! player's own first, then the opponent's (cost), and within each set
//! multiplication and division before addition and subtraction. The reducer
//! computes every value and refuses a recorded cost or damage that differs.
//! Events carry no fractions: x1/2 is written `{"op":"div","value":2}`, and
//! x3/2 as `{"op":"mul","value":3}` then `{"op":"div","value":2}`
//! (multiplications and divisions apply in the order listed).
//!
//! # Who records
//! The player with priority at each step (the text names who acts). A judge
//! may also record any `resolve` for the table; plays and passes are the
//! players' own. `may_act` lists both where a `resolve` is legal.
//!
//! # Gaps in the text, and what the reducer does there
//! 1. **Rounding**: the text does not say how a division that does not come
//!    out even rounds. The header option `rounding` (`down` or `up`) fixes
//!    it for the game; without it, an uneven division stops the breakdown
//!    until a judge rules on the value (`resolve` `rounding`), which must lie
//!    between rounding every division down and rounding every one up.
//! 2. **What effects do**: the text lists when effects happen, not what they
//!    are; the table records them (`resolve` `effects`), and the reducer keeps
//!    them in the order given ("you choose which order", "opponent chooses").
//! 3. **Who records 9a**: activated damage modification is offered to the
//!    player, then to the opponent; each may record modifiers or pass.
//! 4. **A reversal that fails** (2d) **or is itself reversed** does not end the
//!    breakdown it answered: the targeted opponent may try again or pass.
//! 5. **Damage that stops early** (an overturned reversal, "Appropriate
//!    reversals may be overturned"): the table records `stops` on the
//!    overturned card; the reducer ends 9b there.
//! 6. **Negative values**: the text gives no floor; the reducer computes as
//!    written and refuses negative multipliers and divisors (so that rounding
//!    bounds hold).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::event::{ActionType, Header, check_name};
use crate::kernel::{self, Refusal, StepRef, View, Violation, refuse};

mod board;
mod moves;
pub use board::{Board, BreakdownLine, Earlier, Folded, Pile, board, changes, ended_words, outcome, values};
pub use moves::moves;

pub const NAME: &str = "rawdeal";
pub const VERSION: u64 = 1;

// ---------------------------------------------------------------------------
// Payloads.
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Action {
    /// 1a: reveal the card (a reversal at 5a/5b sets `reversal`).
    Play {
        card: String,
        /// The printed Fortitude cost.
        cost: i64,
        /// The printed damage (maneuvers); absent for cards without damage.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        damage: Option<i64>,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        multi: bool,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        reversal: bool,
        /// 6a: where the card goes instead of the Ring Area (e.g. "ringside").
        #[serde(default, skip_serializing_if = "Option::is_none")]
        goes_to: Option<String>,
        /// 1a: the card's target or targets, as revealed.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        targets: Vec<String>,
    },
    /// Nothing at this step (no effects, no modifiers, no reversal).
    Pass {},
    Resolve(Resolve),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "what", rename_all = "snake_case", deny_unknown_fields)]
pub enum Resolve {
    /// 2a: the player's current Fortitude, the modifiers, and the cost they give.
    Cost {
        fortitude: i64,
        #[serde(default, deserialize_with = "named::player_mods")]
        player_mods: Vec<Modifier>,
        #[serde(default, deserialize_with = "named::opponent_mods")]
        opponent_mods: Vec<Modifier>,
        /// A 'when played' effect of this play that lowers the cost.
        #[serde(default, deserialize_with = "named::when_played")]
        when_played: Vec<Modifier>,
        cost: i64,
    },
    /// 2b and 2c.
    Requirements {
        must: bool,
        #[serde(default)]
        follow_up: Option<bool>,
    },
    /// 2e, 2f, 7a, 7b, 8, 9c, 9d: effects, in the order applied.
    Effects { effects: Vec<String> },
    /// 3a, 4, 9a: damage modifiers and the damage they give.
    Damage {
        #[serde(deserialize_with = "named::mods")]
        mods: Vec<Modifier>,
        damage: i64,
    },
    /// 3b.
    ReversalMods {
        cannot_be_reversed: bool,
        #[serde(default)]
        effects: Vec<String>,
    },
    /// 9b: one overturned card.
    Overturn {
        card: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        stops: bool,
    },
    /// 9e.
    EndTurn {
        ends_turn: bool,
        #[serde(default)]
        effects: Vec<String>,
    },
    /// A judge's ruling on an uneven division (gap 1).
    Rounding { value: i64 },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Modifier {
    pub op: Op,
    pub value: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    Mul,
    Div,
    Add,
    Sub,
}

/// Lists of modifiers whose parse errors name their field: the table types
/// each `op`, and a refusal should say which list holds the one mistyped.
mod named {
    use serde::de::{Deserialize, Deserializer, Error};

    use super::Modifier;

    macro_rules! named {
        ($($field:ident),*) => {$(
            pub fn $field<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Modifier>, D::Error> {
                Vec::deserialize(d).map_err(|e| D::Error::custom(format!("{}: {e}", stringify!($field))))
            }
        )*};
    }

    named!(player_mods, opponent_mods, when_played, mods);
}

impl Modifier {
    /// Whether the reducer can apply it (gap 6: no negative multipliers or
    /// divisors, no division by zero); if not, why.
    pub fn check(&self) -> Result<(), String> {
        if self.value < 0 || (self.op == Op::Div && self.value == 0) {
            return Err(format!("a {:?} by {} is not a modifier the reducer can apply (gap 6)", self.op, self.value));
        }
        Ok(())
    }
}

/// [`compute`]'s refusal in words that name the list (`fields`: each list's
/// field and modifiers) holding the modifier it cannot apply.
fn modifiers_refusal(fields: &[(&str, &[Modifier])], what: &str, message: String) -> String {
    match fields.iter().find(|(_, mods)| mods.iter().any(|m| m.check().is_err())) {
        Some((field, _)) => format!("{field}: {message}"),
        None => format!("the {what} with these modifiers: {message}"),
    }
}

// ---------------------------------------------------------------------------
// The step table.
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Who {
    Player,
    Opponent,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Does {
    Cost,
    Requirements,
    Effects,
    Damage,
    ReversalMods,
    Reverse,
    Overturn,
    EndTurn,
}

struct Step {
    no: &'static str,
    title: &'static str,
    who: Who,
    does: Does,
    /// Only for cards with damage.
    damage_only: bool,
}

const fn step(no: &'static str, title: &'static str, who: Who, does: Does, damage_only: bool) -> Step {
    Step { no, title, who, does, damage_only }
}

use Does as D;
use Who::{Opponent, Player};

/// The breakdown after 1a, in the text's order.
#[rustfmt::skip]
const STEPS: &[Step] = &[
    step("2a",    "determine the Fortitude cost",                                Player,   D::Cost,         false),
    step("2b-2c", "'must' requirements and the Follow-up condition",            Player,   D::Requirements, false),
    step("2e",    "'when played' effects of the card's controller",             Player,   D::Effects,      false),
    step("2f",    "'when played' effects of the opponent",                      Opponent, D::Effects,      false),
    step("3a",    "damage modifiers from sources you control",                  Player,   D::Damage,       true),
    step("3b",    "reversal modifiers of the card played",                      Player,   D::ReversalMods, false),
    step("4",     "damage modifiers from sources the targeted opponent controls", Opponent, D::Damage,     true),
    step("5a",    "the targeted opponent may play a reversal",                  Opponent, D::Reverse,      false),
    step("5b",    "a second reversal to a Multi card",                          Opponent, D::Reverse,      false),
    step("7a",    "triggered effects you control, in the order you choose",     Player,   D::Effects,      false),
    step("7b",    "triggered effects the opponent controls, in the order the opponent chooses", Opponent, D::Effects, false),
    step("8",     "apply the effects listed on the card",                       Player,   D::Effects,      false),
    step("9a",    "activated damage modification: the player",                 Player,   D::Damage,       true),
    step("9a",    "activated damage modification: the opponent",               Opponent, D::Damage,       true),
    step("9b",    "damage is overturned one card at a time",                    Opponent, D::Overturn,     true),
    step("9c",    "effects from resolving the damage: the player",              Player,   D::Effects,      true),
    step("9d",    "effects from resolving the damage: the opponent",            Opponent, D::Effects,      true),
    step("9e",    "'end the turn' effects",                                     Player,   D::EndTurn,      false),
];

// ---------------------------------------------------------------------------
// State.
// ---------------------------------------------------------------------------

/// How one breakdown ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// 2d: the card stays where it started and does not count as played.
    NotPlayed,
    /// 5c: completely reversed.
    Reversed,
    /// Through 9e.
    Successful,
}

/// What the card says, as revealed at 1a.
struct Printed<'a> {
    card: &'a str,
    cost: i64,
    damage: Option<i64>,
    multi: bool,
    goes_to: &'a Option<String>,
    targets: &'a Vec<String>,
}

/// A value that needs a judge's ruling (gap 1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Uneven {
    pub what: String,
    pub claimed: i64,
    pub low: i64,
    pub high: i64,
}

/// One card's breakdown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Breakdown {
    pub seq: u64,
    pub card: String,
    pub player: String,
    pub opponent: String,
    pub multi: bool,
    pub printed_cost: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub printed_damage: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub goes_to: Option<String>,
    pub targets: Vec<String>,
    /// The breakdown this card reverses if it is successfully played.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reverses: Option<u64>,
    /// Index into STEPS.
    #[serde(default, skip_serializing_if = "crate::json::outside_snapshot")]
    at: usize,
    pub step: String,
    pub priority: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fortitude: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub damage: Option<i64>,
    pub cannot_be_reversed: bool,
    pub reversals_completed: u64,
    /// Set at step 6 of a reversal that reverses this card.
    pub reversed: bool,
    pub in_no_area: bool,
    pub overturned: Vec<String>,
    /// (step, who, effects) in the order recorded.
    pub effects: Vec<(String, String, Vec<String>)>,
    pub ends_turn: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub awaiting_ruling: Option<Uneven>,
    /// Requirements met at 2b/2c (kept until 2d is decided).
    #[serde(default, skip_serializing_if = "crate::json::outside_snapshot")]
    requirements_met: bool,
    /// 2d: each of 2a-2c that was not satisfied, in words ("the Follow-up
    /// condition is not met"), when the sequence ended there.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_met: Vec<String>,
}

/// A breakdown of the current (or, between plays, the last) play sequence
/// that has ended, as it stood when it ended: the board shows what was
/// computed for it (cost, damage) after it leaves the stack.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ended {
    pub outcome: Outcome,
    /// How many breakdowns were under it when it ended (0: the card played at step 1).
    pub depth: usize,
    pub breakdown: Breakdown,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Played {
    pub seq: u64,
    pub card: String,
    pub player: String,
    pub outcome: Outcome,
    pub depth: usize,
    /// 9e: it ended the turn (the board's turn ends here).
    #[serde(default)]
    pub ends_turn: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct State {
    pub seats: Vec<String>,
    pub judges: Vec<String>,
    /// "down", "up", or None: a judge rules on each uneven division.
    pub rounding: Option<String>,
    /// Breakdowns under way: the first is the card played, each next one a reversal of the one before.
    pub stack: Vec<Breakdown>,
    /// Every breakdown that ended, in the order it ended.
    pub history: Vec<Played>,
    /// The breakdowns of the play sequence under way (or, between plays, the
    /// last one) that have ended, in the order they ended; cleared when the
    /// next card is played at step 1.
    pub ended: Vec<Ended>,
    pub ring_area: BTreeMap<String, Vec<String>>,
    /// Cards in other areas (Ringside, or a 6a destination), by area then player.
    pub areas: BTreeMap<String, BTreeMap<String, Vec<String>>>,
}

pub fn open(header: &Header) -> Result<State, String> {
    if header.seats.len() != 2 {
        return Err("Raw Deal is played by a player and an opponent: two seats".into());
    }
    let rounding = match header.options.get("rounding") {
        None => None,
        Some(Value::String(r)) if r == "down" || r == "up" => Some(r.clone()),
        Some(other) => {
            return Err(format!("option rounding is \"down\" or \"up\" (or absent: a judge rules), not {other}"));
        }
    };
    if let Some(k) = header.options.keys().find(|k| *k != "rounding") {
        return Err(format!("unknown Raw Deal option {k:?}"));
    }
    Ok(State {
        seats: header.seat_ids(),
        judges: header.judges.clone(),
        rounding,
        stack: vec![],
        history: vec![],
        ended: vec![],
        ring_area: header.seats.iter().map(|s| (s.id.clone(), vec![])).collect(),
        areas: BTreeMap::new(),
    })
}

/// The result of applying modifiers: exact, or between two roundings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Computed {
    Exact(i64),
    Uneven { low: i64, high: i64 },
}

/// Applies sets of modifiers in order; within each set, multiplication and
/// division first, then addition and subtraction ("Multiplication/division
/// first, then addition/subtraction").
pub fn compute(base: i64, sets: &[&[Modifier]], rounding: Option<&str>) -> Result<Computed, String> {
    let (mut low, mut high) = (base, base);
    for set in sets {
        let first = set.iter().filter(|m| matches!(m.op, Op::Mul | Op::Div));
        let then = set.iter().filter(|m| matches!(m.op, Op::Add | Op::Sub));
        for m in first.chain(then) {
            m.check()?;
            let div = |x: i64, up: bool| if up { (x + m.value - 1).div_euclid(m.value) } else { x.div_euclid(m.value) };
            (low, high) = match m.op {
                Op::Mul => (low.checked_mul(m.value).ok_or("overflow")?, high.checked_mul(m.value).ok_or("overflow")?),
                Op::Div => match rounding {
                    Some("up") => (div(low, true), div(high, true)),
                    Some(_) => (div(low, false), div(high, false)),
                    None => (div(low, false), div(high, true)),
                },
                Op::Add => (low + m.value, high + m.value),
                Op::Sub => (low - m.value, high - m.value),
            };
        }
    }
    Ok(if low == high { Computed::Exact(low) } else { Computed::Uneven { low, high } })
}

impl State {
    /// The state with its growing lists summarised (count and last), so that a
    /// replay's comparison of two states costs the same at event 10 and at
    /// event 100,000 (`rules::Table::live_json`).
    pub fn live(&self) -> Live<'_> {
        use crate::kernel::tail;
        Live {
            seats: &self.seats,
            judges: &self.judges,
            rounding: &self.rounding,
            stack: &self.stack,
            history: tail(&self.history),
            ended: &self.ended,
            ring_area: self.ring_area.iter().map(|(k, v)| (k, tail(v))).collect(),
            areas: self.areas.iter().map(|(a, m)| (a, m.iter().map(|(k, v)| (k, tail(v))).collect())).collect(),
        }
    }
}

/// [`State::live`]: the state with the history and each pile of cards as a
/// count and the newest.
#[derive(Serialize)]
pub struct Live<'a> {
    seats: &'a [String],
    judges: &'a [String],
    rounding: &'a Option<String>,
    stack: &'a [Breakdown],
    history: kernel::Tail<'a, Played>,
    ended: &'a [Ended],
    ring_area: BTreeMap<&'a String, kernel::Tail<'a, String>>,
    areas: BTreeMap<&'a String, BTreeMap<&'a String, kernel::Tail<'a, String>>>,
}

// What replay shows changed from one state to the next (`delta::Changes`),
// member by member.
crate::changes_by_member!(Live<'_> { areas, ended, history, judges, ring_area, rounding, seats, stack });

const RULE_2A: &str = "2a: the card's player's effects first, then the opponent's (multiplication/division first, then addition/subtraction); you may not play a card if you cannot meet the Fortitude cost, unless a 'when played' effect lowers it";
const RULE_DAMAGE: &str = "3a/4/9a: damage modifiers (multiplication/division first, then addition/subtraction)";

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

/// The history and the piles of cards (Ring area, other areas) only grow at
/// their end: a refused step is undone by cutting them back, and everything
/// else is copied.
impl kernel::Undo for State {
    type Mark = (State, usize, BTreeMap<String, usize>, BTreeMap<String, BTreeMap<String, usize>>);
    fn mark(&self) -> Self::Mark {
        let State { seats, judges, rounding, stack, history, ended, ring_area, areas } = self;
        let rest = State {
            seats: seats.clone(),
            judges: judges.clone(),
            rounding: rounding.clone(),
            stack: stack.clone(),
            history: vec![],
            ended: ended.clone(),
            ring_area: BTreeMap::new(),
            areas: BTreeMap::new(),
        };
        let areas = areas.iter().map(|(a, piles)| (a.clone(), kernel::pile_lengths(piles))).collect();
        (rest, history.len(), kernel::pile_lengths(ring_area), areas)
    }
    fn undo(&mut self, (rest, history, ring, lengths): Self::Mark) {
        let mut h = std::mem::take(&mut self.history);
        h.truncate(history);
        let mut ring_area = std::mem::take(&mut self.ring_area);
        kernel::cut_piles(&mut ring_area, &ring);
        let mut areas = std::mem::take(&mut self.areas);
        areas.retain(|a, piles| lengths.get(a).map(|l| kernel::cut_piles(piles, l)).is_some());
        *self = State { history: h, ring_area, areas, ..rest };
    }
}

impl State {
    fn is_judge(&self, actor: &str) -> bool {
        self.judges.iter().any(|j| j == actor)
    }

    fn step(&mut self, seq: u64, actor: &str, action: &Action) -> Result<(), Refusal> {
        let Some(top) = self.stack.last().cloned() else {
            let Action::Play { card, cost, damage, multi, reversal: false, goes_to, targets } = action else {
                return refuse(
                    "1: Play the card",
                    "no card is being played: the next action is a play (not a reversal)",
                );
            };
            if !self.seats.iter().any(|s| s == actor) {
                return refuse("1: Play the card", format!("{actor} is not a player"));
            }
            let opponent = self.seats.iter().find(|s| *s != actor).cloned().expect("two seats");
            let printed = Printed { card, cost: *cost, damage: *damage, multi: *multi, goes_to, targets };
            // A new play sequence: the last one's ended breakdowns leave the board.
            self.ended.clear();
            return self.open_breakdown(seq, actor, &opponent, printed, None);
        };
        if let Some(uneven) = &top.awaiting_ruling {
            let Action::Resolve(Resolve::Rounding { value }) = action else {
                return refuse(
                    "gap 1 (module docs): the text does not say how fractions round",
                    format!("a judge rules on the {} first", uneven.what),
                );
            };
            if !self.is_judge(actor) {
                return refuse("gap 1 (module docs)", format!("{actor} is not a judge"));
            }
            if *value < uneven.low || *value > uneven.high {
                return refuse(
                    "gap 1 (module docs)",
                    format!(
                        "the {} lies between {} (rounding down) and {} (rounding up)",
                        uneven.what, uneven.low, uneven.high
                    ),
                );
            }
            let what = uneven.what.clone();
            let b = self.top();
            b.awaiting_ruling = None;
            if what == "cost" {
                b.cost = Some(*value);
            } else {
                b.damage = Some(*value);
            }
            self.advance(seq);
            return Ok(());
        }
        let s = &STEPS[top.at];
        let who = if s.who == Player { &top.player } else { &top.opponent };
        let judge_records = self.is_judge(actor) && matches!(action, Action::Resolve(_));
        if actor != who && !judge_records {
            return refuse(rule(s), format!("{who} has priority at step {}, not {actor}", s.no));
        }
        match (s.does, action) {
            (D::Reverse, Action::Play { card, cost, damage, multi, reversal: true, goes_to, targets }) => {
                if top.cannot_be_reversed {
                    return refuse(
                        "3b: reversal modifiers of the card played (e.g. cannot be reversed)",
                        format!("{} cannot be reversed", top.card),
                    );
                }
                let reverses = top.reversed_by_a_reversal();
                let (player, opponent) = (top.opponent.clone(), top.player.clone());
                let printed = Printed { card, cost: *cost, damage: *damage, multi: *multi, goes_to, targets };
                self.open_breakdown(seq, &player, &opponent, printed, reverses)
            }
            (D::Reverse, Action::Play { .. }) => {
                refuse(rule(s), "at this step only a reversal may be played (play with reversal: true)")
            }
            (_, Action::Play { .. }) => {
                refuse(rule(s), "a card can be played only to start a breakdown or, at 5a/5b, as a reversal")
            }
            (D::Reverse, Action::Pass {}) => {
                self.top().at = index_of("7a");
                self.successful(seq);
                Ok(())
            }
            (D::Cost, Action::Resolve(Resolve::Cost { fortitude, player_mods, opponent_mods, when_played, cost })) => {
                let fields =
                    [("player_mods", &player_mods[..]), ("opponent_mods", opponent_mods), ("when_played", when_played)];
                let computed =
                    compute(top.printed_cost, &[player_mods, opponent_mods, when_played], self.rounding.as_deref())
                        .or_else(|m| refuse(RULE_2A, modifiers_refusal(&fields, "cost", m)))?;
                self.top().fortitude = Some(*fortitude);
                let base = top.printed_cost;
                self.record_value(seq, "cost", computed, *cost, RULE_2A, &format!("printed cost {base}"))
            }
            (D::Requirements, Action::Resolve(Resolve::Requirements { must, follow_up })) => {
                let b = self.top();
                b.requirements_met = *must && *follow_up != Some(false);
                // Said at 2d if the sequence ends there (`advance`).
                if !b.cost_met() {
                    let (cost, fortitude) = (b.cost.unwrap_or_default(), b.fortitude.unwrap_or_default());
                    b.not_met.push(format!("the cost {cost} is more than the Fortitude {fortitude}"));
                }
                if !*must {
                    b.not_met.push("a 'must' requirement is not met".into());
                }
                if *follow_up == Some(false) {
                    b.not_met.push("the Follow-up condition is not met".into());
                }
                self.advance(seq);
                Ok(())
            }
            (D::Effects, Action::Resolve(Resolve::Effects { effects })) => {
                for e in effects {
                    check_name("effect", e).or_else(|m| refuse(rule(s), m))?;
                }
                let b = self.top();
                b.effects.push((s.no.to_string(), actor.to_string(), effects.clone()));
                self.advance(seq);
                Ok(())
            }
            (D::Effects | D::Damage | D::ReversalMods | D::EndTurn, Action::Pass {}) => {
                self.advance(seq);
                Ok(())
            }
            (D::Damage, Action::Resolve(Resolve::Damage { mods, damage })) => {
                let current = top.current_damage();
                let computed = compute(current, &[mods], self.rounding.as_deref())
                    .or_else(|m| refuse(RULE_DAMAGE, modifiers_refusal(&[("mods", mods)], "damage", m)))?;
                self.record_value(seq, "damage", computed, *damage, RULE_DAMAGE, &format!("damage {current}"))
            }
            (D::ReversalMods, Action::Resolve(Resolve::ReversalMods { cannot_be_reversed, effects })) => {
                let b = self.top();
                b.cannot_be_reversed = *cannot_be_reversed;
                b.effects.push(("3b".into(), actor.to_string(), effects.clone()));
                self.advance(seq);
                Ok(())
            }
            (D::Overturn, Action::Resolve(Resolve::Overturn { card, stops })) => {
                check_name("card", card).or_else(|m| refuse(rule(s), m))?;
                let b = self.top();
                b.overturned.push(card.clone());
                if *stops || b.overturned.len() as i64 >= b.damage.unwrap_or(0) {
                    self.advance(seq);
                }
                Ok(())
            }
            (D::EndTurn, Action::Resolve(Resolve::EndTurn { ends_turn, effects })) => {
                let b = self.top();
                b.ends_turn = *ends_turn;
                b.effects.push(("9e".into(), actor.to_string(), effects.clone()));
                self.advance(seq);
                Ok(())
            }
            _ => refuse(rule(s), format!("step {} is recorded as {}", s.no, expected(s.does))),
        }
    }

    /// A computed cost or damage against the recorded one: equal, or
    /// refused; an uneven division with no rounding in the header waits for
    /// a judge (gap 1).
    fn record_value(
        &mut self,
        seq: u64,
        what: &str,
        computed: Computed,
        claimed: i64,
        rule: &'static str,
        from: &str,
    ) -> Result<(), Refusal> {
        let b = self.top();
        let value = match computed {
            Computed::Exact(v) if v != claimed => {
                return refuse(rule, format!("{from} with these modifiers is {v}, not {claimed}"));
            }
            Computed::Exact(v) => v,
            Computed::Uneven { low, high } => {
                b.awaiting_ruling = Some(Uneven { what: what.into(), claimed, low, high });
                claimed
            }
        };
        if what == "cost" {
            b.cost = Some(value);
        } else {
            b.damage = Some(value);
        }
        if b.awaiting_ruling.is_none() {
            self.advance(seq);
        }
        Ok(())
    }

    fn top(&mut self) -> &mut Breakdown {
        self.stack.last_mut().expect("a breakdown under way")
    }

    fn open_breakdown(
        &mut self,
        seq: u64,
        player: &str,
        opponent: &str,
        p: Printed,
        reverses: Option<u64>,
    ) -> Result<(), Refusal> {
        let Printed { card, cost, damage, multi, goes_to, targets } = p;
        check_name("card", card).or_else(|m| refuse("1a: Reveal the card", m))?;
        for t in targets {
            check_name("target", t).or_else(|m| refuse("1a: choose a target or targets", m))?;
        }
        if let Some(area) = goes_to {
            check_name("area", area).or_else(|m| refuse("6a", m))?;
        }
        self.stack.push(Breakdown {
            seq,
            card: card.to_string(),
            player: player.to_string(),
            opponent: opponent.to_string(),
            multi,
            printed_cost: cost,
            printed_damage: damage,
            goes_to: goes_to.clone(),
            targets: targets.clone(),
            reverses,
            at: 0,
            step: String::new(),
            priority: String::new(),
            fortitude: None,
            cost: None,
            damage,
            cannot_be_reversed: false,
            reversals_completed: 0,
            reversed: false,
            in_no_area: false,
            overturned: vec![],
            effects: vec![],
            ends_turn: false,
            awaiting_ruling: None,
            requirements_met: false,
            not_met: vec![],
        });
        self.settle(seq);
        Ok(())
    }

    /// The current step is done: on to the next that applies.
    fn advance(&mut self, seq: u64) {
        let b = self.top();
        let done = STEPS[b.at].no;
        if done == "2b-2c" {
            // 2d: if any of 2a-2c cannot be satisfied, the sequence ends.
            if !(b.cost_met() && b.requirements_met) {
                self.finish(seq, Outcome::NotPlayed);
                return;
            }
            b.in_no_area = true;
        }
        if done == "8" {
            self.after_effects();
        }
        self.top().at += 1;
        self.settle(seq);
    }

    /// Skips steps that do not apply; sets the display fields; finishes at the end.
    fn settle(&mut self, seq: u64) {
        loop {
            let b = self.stack.last_mut().expect("breakdown");
            if b.at >= STEPS.len() {
                self.finish(seq, Outcome::Successful);
                return;
            }
            let s = &STEPS[b.at];
            let no_damage = b.printed_damage.is_none() || (s.does == D::Overturn && b.damage.unwrap_or(0) <= 0);
            let skip = (s.damage_only && no_damage) || (s.no == "5b" && !(b.multi && b.reversals_completed == 1));
            if skip {
                b.at += 1;
                continue;
            }
            b.step = s.no.to_string();
            b.priority = if s.who == Player { b.player.clone() } else { b.opponent.clone() };
            return;
        }
    }

    /// Step 6: successfully played.
    fn successful(&mut self, seq: u64) {
        let b = self.top();
        b.in_no_area = false;
        let (card, player, goes_to, reverses) = (b.card.clone(), b.player.clone(), b.goes_to.clone(), b.reverses);
        if goes_to.is_none() {
            self.ring_area.entry(player).or_default().push(card);
        }
        // "If this card is reversing the card in question ..., the affected maneuver is now considered reversed."
        if let Some(target) = reverses
            && let Some(parent) = self.stack.iter_mut().find(|p| p.seq == target)
        {
            parent.reversed = true;
        }
        self.settle(seq);
    }

    /// Step 8: 6a cards go to their area; a card completely reversed by this one moves to Ringside.
    fn after_effects(&mut self) {
        let b = self.stack.last().expect("breakdown").clone();
        if let Some(area) = &b.goes_to {
            self.areas.entry(area.clone()).or_default().entry(b.player.clone()).or_default().push(b.card.clone());
        }
        if let Some(target) = b.reverses
            && let Some(parent) = self.stack.iter().find(|p| p.seq == target).cloned()
        {
            self.areas.entry("ringside".into()).or_default().entry(parent.player).or_default().push(parent.card);
        }
    }

    /// A breakdown ends; the one below it (if any) learns how.
    fn finish(&mut self, seq: u64, outcome: Outcome) {
        let done = self.stack.pop().expect("breakdown");
        self.history.push(Played {
            seq: done.seq,
            card: done.card.clone(),
            player: done.player.clone(),
            outcome,
            depth: self.stack.len(),
            ends_turn: done.ends_turn,
        });
        self.ended.push(Ended { outcome, depth: self.stack.len(), breakdown: done.clone() });
        let Some(parent) = self.stack.last_mut() else { return };
        if parent.reversed {
            // 5c: completely reversed: the breakdown ends.
            self.finish(seq, Outcome::Reversed);
        } else if outcome == Outcome::Successful && done.reverses.is_none() {
            // The first reversal to a Multi card has completed: 5b.
            parent.reversals_completed += 1;
            parent.at = index_of("5b");
            self.settle(seq);
        }
        // Otherwise (gap 4) the targeted opponent may try again or pass.
    }

    pub fn view(&self) -> View {
        let Some(b) = self.stack.last() else {
            return View {
                step: StepRef {
                    number: "1".into(),
                    title: "play the card".into(),
                    reference: "Raw Deal step 1 (play the card)".into(),
                },
                may_act: self.seats.clone(),
                legal: vec![ActionType::Play],
                awaiting_ruling: None,
            };
        };
        let s = b.step_now();
        let chain: Vec<&str> = self.stack.iter().map(|f| f.card.as_str()).collect();
        let depth = if self.stack.len() > 1 {
            format!(", breakdown {} of {}: {}", self.stack.len(), self.stack.len(), chain.join(" <- "))
        } else {
            String::new()
        };
        let step = StepRef {
            number: s.no.into(),
            title: s.title.into(),
            reference: format!("Raw Deal step {} ({}) of {}{depth}", s.no, s.title, b.card),
        };
        if let Some(u) = &b.awaiting_ruling {
            return View {
                step,
                may_act: self.judges.clone(),
                legal: vec![ActionType::Resolve],
                awaiting_ruling: Some(format!(
                    "the {} divides unevenly ({} to {}; the table said {}) and the header fixes no rounding",
                    u.what, u.low, u.high, u.claimed
                )),
            };
        }
        let legal = b.legal();
        View { step, may_act: self.may_act(b, &legal), legal, awaiting_ruling: None }
    }

    /// Who may record at breakdown `b`'s step, given what is `legal` there:
    /// the player with priority, and a judge may record any determination
    /// (a resolve) for the table.
    fn may_act(&self, b: &Breakdown, legal: &[ActionType]) -> Vec<String> {
        let mut may_act = vec![b.priority.clone()];
        if legal.contains(&ActionType::Resolve) {
            may_act.extend(self.judges.iter().cloned());
        }
        may_act
    }
}

impl Breakdown {
    /// The step it stands at.
    fn step_now(&self) -> &'static Step {
        &STEPS[self.at]
    }

    /// The action types its step takes (not while a judge rules on a value).
    fn legal(&self) -> Vec<ActionType> {
        match self.step_now().does {
            // 3b barred reversals: the targeted opponent can only pass.
            D::Reverse if self.cannot_be_reversed => vec![ActionType::Pass],
            D::Reverse => vec![ActionType::Play, ActionType::Pass],
            D::Cost | D::Requirements | D::Overturn => vec![ActionType::Resolve],
            _ => vec![ActionType::Resolve, ActionType::Pass],
        }
    }

    /// The damage the next modifiers apply to: as modified so far, or as printed.
    fn current_damage(&self) -> i64 {
        self.damage.or(self.printed_damage).unwrap_or(0)
    }

    /// 2a/2d: the Fortitude recorded meets the cost determined.
    fn cost_met(&self) -> bool {
        self.cost.unwrap_or(i64::MAX) <= self.fortitude.unwrap_or(i64::MIN)
    }

    /// The card a reversal played on it now reverses once successfully
    /// played (6): this one, except for the first reversal to a Multi card.
    fn reversed_by_a_reversal(&self) -> Option<u64> {
        if self.multi && self.reversals_completed == 0 { None } else { Some(self.seq) }
    }
}

fn index_of(no: &str) -> usize {
    STEPS.iter().position(|s| s.no == no).expect("step")
}

fn rule(s: &Step) -> &'static str {
    match s.does {
        D::Cost => RULE_2A,
        D::Requirements => {
            "2b/2c: 'must' requirements and the Follow-up condition; 2d: if any fails, the sequence ends"
        }
        D::Effects => "2e/2f, 7a/7b, 8, 9c/9d: effects, the controller's then the opponent's",
        D::Damage => RULE_DAMAGE,
        D::ReversalMods => "3b: apply reversal modifiers of the card played",
        D::Reverse => {
            "5a: the targeted opponent may play a reversal card (it follows its own Timing Breakdown); 5b: a second reversal to a Multi card"
        }
        D::Overturn => "9b: damage is overturned one card at a time",
        D::EndTurn => "9e: 'end the turn' effects are resolved",
    }
}

fn expected(d: Does) -> &'static str {
    match d {
        D::Cost => "a resolve (cost)",
        D::Requirements => "a resolve (requirements)",
        D::Effects => "a resolve (effects) or a pass",
        D::Damage => "a resolve (damage) or a pass",
        D::ReversalMods => "a resolve (reversal_mods) or a pass",
        D::Reverse => "a reversal (play with reversal: true) or a pass",
        D::Overturn => "a resolve (overturn), one card at a time",
        D::EndTurn => "a resolve (end_turn) or a pass",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(op: Op, value: i64) -> Modifier {
        Modifier { op, value, source: None }
    }

    #[test]
    fn multiplication_and_division_before_addition_and_subtraction_players_first() {
        // Player: +2 then x2 -> x2 first: 3*2+2 = 8; opponent: -1 and /2 -> 8/2-1 = 3.
        let player = [m(Op::Add, 2), m(Op::Mul, 2)];
        let opponent = [m(Op::Sub, 1), m(Op::Div, 2)];
        assert_eq!(compute(3, &[&player, &opponent], Some("down")), Ok(Computed::Exact(3)));
        // Opponent first would give a different value: the order matters.
        assert_eq!(compute(3, &[&opponent, &player], Some("down")), Ok(Computed::Exact(2)));
    }

    #[test]
    fn uneven_division_rounds_by_the_option_or_waits_for_a_judge() {
        let half = [m(Op::Div, 2)];
        assert_eq!(compute(5, &[&half], Some("down")), Ok(Computed::Exact(2)));
        assert_eq!(compute(5, &[&half], Some("up")), Ok(Computed::Exact(3)));
        assert_eq!(compute(5, &[&half], None), Ok(Computed::Uneven { low: 2, high: 3 }));
        assert_eq!(compute(6, &[&half], None), Ok(Computed::Exact(3)));
        assert!(compute(6, &[&[m(Op::Div, 0)]], None).is_err());
    }
}
