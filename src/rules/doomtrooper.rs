//! Doomtrooper: "The Mother of All Combat Breakdowns" (`shared/rules/doomtrooper-combat-breakdown.txt`).
//!
//! The module is the text's step table ([`MAIN`], [`FIRST`], [`SECOND`])
//! plus the few places where the text branches:
//!
//! - after steps 12-15: "IF COMBATANTS ARE CHANGED, REPEAT STEPS 2-15";
//! - after steps 16-19: "IF COMBAT IS NON-SIMULTANEOUS, GO TO THE
//!   NON-SIMULTANEOUS COMBAT BREAKDOWN";
//! - "Once a COMBAT ENDING CARD is played, combat IMMEDIATELY ends and
//!   proceed to step 37";
//! - after the first combat: "IF SECOND WARRIOR IS STILL ALIVE, PROCEED".
//!
//! A game holds many combats, one after another. Between combats any seat
//! may start one (step 1). Roles: the attacking player (who announced step
//! 1), the defending player, "other players" (every other seat, in the
//! header's seat order) and, once combat is non-simultaneous, the first and
//! second player.
//!
//! # What the reducer checks
//! - who acts at every step, in the text's order; windows close when every
//!   player in them has passed in a row, and any play restarts the round;
//! - a counter only nullifies (it names the seq of an effect of the same
//!   part of the breakdown, and counters may be countered in turn);
//!   modifiers (`modify`) are legal only in MODIFY COMBAT RATINGS, saves only
//!   in ESCAPE WOUNDING, and so on for every kind of effect;
//! - the special cards listed at the end of the text only in the steps named
//!   there, and the combat-ending ones only as `end_combat`;
//! - at step 37, that the cards the table counted are exactly the modifiers
//!   still standing ("note which cards were countered ... and disregard
//!   those cards"); at step 44, that each warrior's status follows its
//!   result, or, where a save that still stands names it, is milder (gap 9);
//! - which effects a step allows before what the effect names, so a refusal
//!   names the step's rule;
//! - the repeat of steps 2-15, the non-simultaneous branch, the jump to 37.
//!
//! # Gaps in the text, and what the reducer does there
//! The text gives no arithmetic, so combat standings, results and points
//! are what the table determined, recorded by `resolve` events and checked
//! only for completeness and consistency. Where the text is silent:
//! 1. **Who records a determination** (steps 32, 37, 44): the attacking
//!    player (the first player once non-simultaneous) or a judge; awards at
//!    45 and 47 by the player awarded or a judge.
//! 2. **"Combat IMMEDIATELY ends"** while counters exist: a combat-ending
//!    card can still be countered ("a counter NULLIFIES a just-played
//!    card"), so exactly one window still runs, the one that answers it:
//!    the card's own window when it is played in a window where players
//!    counter (12-15, 33-36), else the next step (a card at 20, 22, 28 or
//!    30 completes that step at once and 21, 23, 29 or 31 answers it; one
//!    at 24 or 26 completes the announcement step and 25 or 27 answers it).
//!    In that window only counters and passes are legal (`legal` does not
//!    list `play`). When it closes with the card standing, the next step is
//!    37; nothing of the steps in between runs. If it closes with the card
//!    nullified, the combat goes on; an equipment announcement the card
//!    interrupted (24, 26) is still owed, so the combat returns to it.
//! 3. **Who answers in steps 17, 19, 21, 23, 29, 31**: exactly the players
//!    the text lists ("Defending player, then others"); the player whose
//!    card is countered gets no answer there. Steps 25, 27, 39, 41, 43, 46,
//!    48 say "until all players pass", so everyone is in those windows.
//!    In steps 12-15 the defending player may only play changes, as written:
//!    it cannot counter a counter to its own change.
//! 4. **Conflicting effects**: two strike-order cards that still stand and
//!    name different first players, two combatant changes that name
//!    different warriors, two award modifications with different points:
//!    the reducer stops and waits for a judge's ruling (a `resolve` by a
//!    judge), rather than pick one.
//! 5. **A countered battle tactic or warzone**: shown as countered in the
//!    state (the board strikes it); the text gives it no further
//!    consequence, and neither does the reducer. When the combatants change
//!    and steps 2-15 repeat, the round's battle tactic and warzone are
//!    cleared: they are announced again, and the earlier ones no longer
//!    stand (their effect lines keep their names).
//! 6. **A combat ended by a card in the non-simultaneous breakdown** ends
//!    the whole combat: after the first combat's step 46 there is no second
//!    combat.
//! 7. **Step 42 with no other players** is skipped (an empty window).
//! 8. **Step 24/26 sacrifice cards**: the player announcing equipment may
//!    play equipment-usage cards (Ticker, Personal Anti-Personnel Mines,
//!    Smoke Bomb) before the announcement, which ends the step (as does a
//!    combat-ending card: gap 2).
//! 9. **What a save changes** (step 44): a save that still stands names a
//!    warrior that was wounded or killed at 37; the text does not say what it
//!    becomes (each card says). The recorder records it, and it must be
//!    milder than the result (killed -> wounded or unharmed; wounded ->
//!    unharmed): recording the very fate it was saved from contradicts the
//!    standing save and is refused. Only a judge's record may differ (a
//!    ruling, on the record under the judge's name).
//! 10. **"Other players" with more than three seats**: the text gives no
//!     order among them; the reducer uses the header's seat order, and
//!     `state` shows the order of priority of the window now open.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::event::{ActionType, Header, check_name};
use crate::kernel::{self, Effect, Ledger, Refusal, StepRef, View, Violation, Window, refuse};

mod board;
mod moves;
pub use board::{Announced, Board, CombatBoard, Modifier, announced_words, board, changes, items, outcome};
pub use moves::moves;

pub const NAME: &str = "doomtrooper";
pub const VERSION: u64 = 1;

// ---------------------------------------------------------------------------
// Payloads: the `action` of each event, as the table records it.
// ---------------------------------------------------------------------------

/// A Doomtrooper action (`type` is the kernel's action type).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Action {
    Announce(Announce),
    Play(Play),
    /// A card effect that NULLIFIES the effect made by event `target`.
    Counter {
        card: String,
        target: u64,
    },
    Pass {},
    Resolve(Resolve),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "what", rename_all = "snake_case", deny_unknown_fields)]
pub enum Announce {
    /// Step 1: the actor is the attacking player.
    Combat { defending_player: String, attacker: String, defender: String },
    /// Step 2.
    BattleTactic { tactic: String },
    /// Step 7: the warzone the defender defends from, or null for none.
    Warzone {
        #[serde(default)]
        warzone: Option<String>,
    },
    /// Steps 24 and 26: IN PLAY equipment (relics count as equipment) used.
    Equipment { items: Vec<String> },
}

/// A card effect, by what it does (`effect`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "effect", rename_all = "snake_case", deny_unknown_fields)]
pub enum Play {
    /// CHANGE COMBATANTS: the new attacker and/or defender.
    ChangeCombatants {
        card: String,
        #[serde(default)]
        attacker: Option<String>,
        #[serde(default)]
        defender: Option<String>,
    },
    /// DETERMINE NON-SIMULTANEOUS COMBAT: the seat whose warrior strikes first (null: simultaneous).
    StrikeOrder {
        card: String,
        #[serde(default)]
        first: Option<String>,
    },
    /// END COMBAT, or a COMBAT ENDING CARD where its text allows.
    EndCombat { card: String },
    /// DETERMINE EQUIPMENT USAGE: a card used with equipment (e.g. Ticker).
    Equipment { card: String },
    /// MODIFY COMBAT RATINGS.
    Modify { card: String },
    /// ESCAPE WOUNDING: "save" a wounded or killed warrior.
    Save { card: String, warrior: String },
    /// AWARD POINTS: modify the awarding; `points` is the award as the table determined it.
    ModifyAward { card: String, points: u64 },
}

impl Play {
    fn card_and_kind(&self) -> (&String, Kind) {
        match self {
            Play::ChangeCombatants { card, .. } => (card, Kind::ChangeCombatants),
            Play::StrikeOrder { card, .. } => (card, Kind::StrikeOrder),
            Play::EndCombat { card } => (card, Kind::EndCombat),
            Play::Equipment { card } => (card, Kind::Equipment),
            Play::Modify { card } => (card, Kind::Modify),
            Play::Save { card, .. } => (card, Kind::Save),
            Play::ModifyAward { card, .. } => (card, Kind::ModifyAward),
        }
    }
}

/// What the table determined (or, where the game waits for one, a judge's ruling).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "what", rename_all = "snake_case", deny_unknown_fields)]
pub enum Resolve {
    /// Step 32: each combatant's combat rating.
    Standing { ratings: Vec<Rating> },
    /// Step 37: each combatant's result, and the seqs of the modifiers counted.
    Results { results: Vec<Outcome>, counted: Vec<u64> },
    /// Step 44: each combatant's status after ESCAPE WOUNDING.
    Status { status: Vec<Outcome> },
    /// Steps 45 and 47: points earned by the player awarded.
    Award { points: u64 },
    /// Judge's ruling: who strikes first (null: simultaneous).
    StrikeOrder {
        #[serde(default)]
        first: Option<String>,
    },
    /// Judge's ruling: the combatants after conflicting changes.
    Combatants { attacker: String, defender: String },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Rating {
    pub warrior: String,
    pub rating: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Outcome {
    pub warrior: String,
    pub outcome: Fate,
}

/// What happens to a warrior: at 44, "wounded warriors are rotated, killed
/// warriors are discarded, and those removed from play are removed".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Fate {
    Unharmed,
    Wounded,
    Killed,
    RemovedFromPlay,
}

impl Fate {
    /// Unharmed, then wounded, then killed: what a "save" can improve.
    /// Removed from play is not a fate a save answers ("save wounded and/or
    /// killed warriors"), so nothing is milder than it here.
    fn milder_than(self, other: Fate) -> bool {
        let rank = |f: Fate| match f {
            Fate::Unharmed => 0,
            Fate::Wounded => 1,
            Fate::Killed | Fate::RemovedFromPlay => 2,
        };
        rank(self) < rank(other)
    }

    fn alive(self) -> bool {
        matches!(self, Fate::Unharmed | Fate::Wounded)
    }
}

// ---------------------------------------------------------------------------
// The step table.
// ---------------------------------------------------------------------------

/// Who acts, in the text's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Attacking,
    Defending,
    Others,
    First,
    Second,
}
use Role::*;

/// The headings of the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum Section {
    BattleTactic,
    Warzone,
    ChangeCombatants,
    NonSimultaneous,
    EndCombat,
    Equipment,
    Standing,
    Modify,
    Resolve,
    Escape,
    Status,
    Award,
}

impl Section {
    fn title(self) -> &'static str {
        match self {
            Section::BattleTactic => "ANNOUNCE BATTLE TACTIC",
            Section::Warzone => "ANNOUNCE WARZONE",
            Section::ChangeCombatants => "CHANGE COMBATANTS",
            Section::NonSimultaneous => "DETERMINE NON-SIMULTANEOUS COMBAT",
            Section::EndCombat => "END COMBAT",
            Section::Equipment => "DETERMINE EQUIPMENT USAGE",
            Section::Standing => "DETERMINE COMBAT STANDING",
            Section::Modify => "MODIFY COMBAT RATINGS",
            Section::Resolve => "RESOLVE COMBAT",
            Section::Escape => "ESCAPE WOUNDING",
            Section::Status => "CHANGE WARRIOR STATUS",
            Section::Award => "AWARD POINTS",
        }
    }
}

/// Kinds of card effect (`Play`'s `effect`), as the ledger names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    ChangeCombatants,
    StrikeOrder,
    EndCombat,
    Equipment,
    Modify,
    Save,
    ModifyAward,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::ChangeCombatants => "change_combatants",
            Kind::StrikeOrder => "strike_order",
            Kind::EndCombat => "end_combat",
            Kind::Equipment => "equipment",
            Kind::Modify => "modify",
            Kind::Save => "save",
            Kind::ModifyAward => "modify_award",
        }
    }
}

/// Whose effects a counter may answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answers {
    Any,
    /// Step 13: "counter Defending player's actions".
    EffectsOf(Role),
    /// Step 14: "counter either players' action".
    Combatants,
}

/// What one role may do in a window.
#[derive(Debug, Clone, Copy)]
enum May {
    Play(&'static [Kind]),
    Counter(Answers),
}

#[derive(Debug, Clone, Copy)]
enum Does {
    /// The role announces `What`; it may first play the listed effects.
    Announce(Role, &'static str, &'static [Kind]),
    /// A window of priority in `order`; `may` says what each role may do.
    Window(&'static [Role], &'static [(Role, May)]),
    /// A window of one role, who may play the listed effects ("X may play card effects to ...").
    Plays(Role, &'static [Kind]),
    /// AWARD POINTS: a window in `order`; who may modify the awarding, and who may counter.
    Awards(&'static [Role], &'static [(Role, May)], &'static [(Role, May)]),
    /// The table records what it determined (`resolve` with this `what`).
    Determine(&'static str),
    /// The role is awarded points (`resolve` award).
    Award(Role),
}

#[derive(Debug, Clone, Copy)]
struct Step {
    no: &'static str,
    section: Section,
    does: Does,
}

const fn step(no: &'static str, section: Section, does: Does) -> Step {
    Step { no, section, does }
}

const ANY_COUNTER: May = May::Counter(Answers::Any);
const MODIFY_AWARD: May = May::Play(&[Kind::ModifyAward]);

/// "X, then Y ... may play card effects to counter": everyone in the order may counter.
const fn counters(order: &'static [Role]) -> Does {
    #[rustfmt::skip]
    const ALL: &[(Role, May)] = &[(Attacking, ANY_COUNTER), (Defending, ANY_COUNTER), (Others, ANY_COUNTER), (First, ANY_COUNTER), (Second, ANY_COUNTER)];
    Does::Window(order, ALL)
}

/// "X plays card effects to modify combat": everyone in the order may modify or counter.
const fn modify(order: &'static [Role]) -> Does {
    const M: May = May::Play(&[Kind::Modify]);
    #[rustfmt::skip]
    const ALL: &[(Role, May)] = &[
        (Attacking, M), (Defending, M), (Others, M), (First, M), (Second, M),
        (Attacking, ANY_COUNTER), (Defending, ANY_COUNTER), (Others, ANY_COUNTER), (First, ANY_COUNTER), (Second, ANY_COUNTER),
    ];
    Does::Window(order, ALL)
}

/// "X, then others may counter or modify the awarding. Continue until all
/// players pass": the player awarded (last in the order) may only counter.
const fn award_window(order: &'static [Role]) -> Does {
    #[rustfmt::skip]
    const ALL_COUNTER: &[(Role, May)] = &[(Attacking, ANY_COUNTER), (Defending, ANY_COUNTER), (Others, ANY_COUNTER), (First, ANY_COUNTER), (Second, ANY_COUNTER)];
    let may: &'static [(Role, May)] = match order[order.len() - 1] {
        Attacking => &[(Defending, MODIFY_AWARD), (Others, MODIFY_AWARD)],
        Defending => &[(Attacking, MODIFY_AWARD), (Others, MODIFY_AWARD)],
        First => &[(Second, MODIFY_AWARD), (Others, MODIFY_AWARD)],
        Second => &[(First, MODIFY_AWARD), (Others, MODIFY_AWARD)],
        Others => &[],
    };
    Does::Awards(order, may, ALL_COUNTER)
}

const fn plays(role: Role, kinds: &'static [Kind]) -> Does {
    Does::Plays(role, kinds)
}

/// A window's players in order, and what each role may do in it: the step
/// table's own slices where it has them (every event asks, and copying them
/// was most of the fold's allocations).
type WindowSpec = (Cow<'static, [Role]>, Cow<'static, [(Role, May)]>);

impl Step {
    /// A window in which some player may counter: one that can answer a card.
    fn answers_cards(&self) -> bool {
        self.window().is_some_and(|(_, may)| may.iter().any(|(_, m)| matches!(m, May::Counter(_))))
    }

    /// The window of a window step: its order, and what each role may do.
    fn window(&self) -> Option<WindowSpec> {
        match self.does {
            Does::Window(order, may) => Some((Cow::Borrowed(order), Cow::Borrowed(may))),
            Does::Plays(role, kinds) => Some((Cow::Owned(vec![role]), Cow::Owned(vec![(role, May::Play(kinds))]))),
            Does::Awards(order, modify, counter) => {
                Some((Cow::Borrowed(order), Cow::Owned([modify, counter].concat())))
            }
            _ => None,
        }
    }
}

use Section as S;
const SAVE: &[Kind] = &[Kind::Save];
const END: &[Kind] = &[Kind::EndCombat];
const ORDER: &[Kind] = &[Kind::StrikeOrder];
const EQUIP: &[Kind] = &[Kind::Equipment];

/// COMBAT BREAKDOWN, steps 2 to 48 (step 1 starts a combat).
#[rustfmt::skip]
const MAIN: &[Step] = &[
    step("2",     S::BattleTactic,     Does::Announce(Attacking, "battle_tactic", &[])),
    step("3-6",   S::BattleTactic,     counters(&[Defending, Attacking, Others])),
    step("7",     S::Warzone,          Does::Announce(Defending, "warzone", &[])),
    step("8-11",  S::Warzone,          counters(&[Attacking, Defending, Others])),
    step("12-15", S::ChangeCombatants, Does::Window(&[Defending, Attacking, Others], &[
        (Defending, May::Play(&[Kind::ChangeCombatants])),
        (Attacking, May::Counter(Answers::EffectsOf(Defending))),
        (Others,    May::Counter(Answers::Combatants)),
    ])),
    step("16",    S::NonSimultaneous,  plays(Attacking, ORDER)),
    step("17",    S::NonSimultaneous,  counters(&[Defending, Others])),
    step("18",    S::NonSimultaneous,  plays(Defending, ORDER)),
    step("19",    S::NonSimultaneous,  counters(&[Attacking, Others])),
    step("20",    S::EndCombat,        plays(Attacking, END)),
    step("21",    S::EndCombat,        counters(&[Defending, Others])),
    step("22",    S::EndCombat,        plays(Defending, END)),
    step("23",    S::EndCombat,        counters(&[Attacking, Others])),
    step("24",    S::Equipment,        Does::Announce(Attacking, "equipment", EQUIP)),
    step("25",    S::Equipment,        counters(&[Defending, Others, Attacking])),
    step("26",    S::Equipment,        Does::Announce(Defending, "equipment", EQUIP)),
    step("27",    S::Equipment,        counters(&[Attacking, Others, Defending])),
    step("28",    S::EndCombat,        plays(Attacking, END)),
    step("29",    S::EndCombat,        counters(&[Defending, Others])),
    step("30",    S::EndCombat,        plays(Defending, END)),
    step("31",    S::EndCombat,        counters(&[Attacking, Others])),
    step("32",    S::Standing,         Does::Determine("standing")),
    step("33-36", S::Modify,           modify(&[Attacking, Defending, Others])),
    step("37",    S::Resolve,          Does::Determine("results")),
    step("38",    S::Escape,           plays(Attacking, SAVE)),
    step("39",    S::Escape,           counters(&[Defending, Others, Attacking])),
    step("40",    S::Escape,           plays(Defending, SAVE)),
    step("41",    S::Escape,           counters(&[Attacking, Others, Defending])),
    step("42",    S::Escape,           plays(Others, SAVE)),
    step("43",    S::Escape,           counters(&[Attacking, Defending, Others])),
    step("44",    S::Status,           Does::Determine("status")),
    step("45",    S::Award,            Does::Award(Attacking)),
    step("46",    S::Award,            award_window(&[Defending, Others, Attacking])),
    step("47",    S::Award,            Does::Award(Defending)),
    step("48",    S::Award,            award_window(&[Attacking, Others, Defending])),
];

/// Where [`FIRST`]'s steps under the heading FIRST COMBAT begin (step 24):
/// END COMBAT (20-23) comes before it.
const FIRST_COMBAT_FROM: usize = 4;

/// NON-SIMULTANEOUS COMBAT BREAKDOWN: END COMBAT and the FIRST COMBAT.
#[rustfmt::skip]
const FIRST: &[Step] = &[
    step("20",    S::EndCombat,        plays(First, END)),
    step("21",    S::EndCombat,        counters(&[Second, Others])),
    step("22",    S::EndCombat,        plays(Second, END)),
    step("23",    S::EndCombat,        counters(&[First, Others])),
    step("24",    S::Equipment,        Does::Announce(First, "equipment", EQUIP)),
    step("25",    S::Equipment,        counters(&[Second, Others, First])),
    step("28",    S::EndCombat,        plays(First, END)),
    step("29",    S::EndCombat,        counters(&[Second, Others])),
    step("30",    S::EndCombat,        plays(Second, END)),
    step("31",    S::EndCombat,        counters(&[First, Others])),
    step("32",    S::Standing,         Does::Determine("standing")),
    step("33-36", S::Modify,           modify(&[First, Second, Others])),
    step("37",    S::Resolve,          Does::Determine("results")),
    step("38",    S::Escape,           plays(First, SAVE)),
    step("39",    S::Escape,           counters(&[Second, Others, First])),
    step("42",    S::Escape,           plays(Others, SAVE)),
    step("43",    S::Escape,           counters(&[First, Second, Others])),
    step("44",    S::Status,           Does::Determine("status")),
    step("45",    S::Award,            Does::Award(First)),
    step("46",    S::Award,            award_window(&[Second, Others, First])),
];

/// NON-SIMULTANEOUS COMBAT BREAKDOWN: the SECOND COMBAT, "IF SECOND WARRIOR IS STILL ALIVE".
#[rustfmt::skip]
const SECOND: &[Step] = &[
    step("24",    S::Equipment,        Does::Announce(Second, "equipment", EQUIP)),
    step("25",    S::Equipment,        counters(&[First, Others, Second])),
    step("28",    S::EndCombat,        plays(First, END)),
    step("29",    S::EndCombat,        counters(&[Second, Others])),
    step("30",    S::EndCombat,        plays(Second, END)),
    step("31",    S::EndCombat,        counters(&[First, Others])),
    step("32",    S::Standing,         Does::Determine("standing")),
    step("33-36", S::Modify,           modify(&[First, Second, Others])),
    step("37",    S::Resolve,          Does::Determine("results")),
    step("38",    S::Escape,           plays(Second, SAVE)),
    step("39",    S::Escape,           counters(&[First, Others, Second])),
    step("42",    S::Escape,           plays(Others, SAVE)),
    step("43",    S::Escape,           counters(&[Second, First, Others])),
    step("44",    S::Status,           Does::Determine("status")),
    step("45",    S::Award,            Does::Award(Second)),
    step("46",    S::Award,            award_window(&[First, Others, Second])),
];

/// "Here are special cards to consider and during which step they are played."
struct Special {
    name: &'static str,
    ends_combat: bool,
    sections: &'static [Section],
}

#[rustfmt::skip]
const SPECIAL_CARDS: &[Special] = &[
    // SACRIFICE CARDS
    Special { name: "Personal Anti-Personnel Mines", ends_combat: true,  sections: &[S::Equipment] },
    Special { name: "Ticker",                        ends_combat: false, sections: &[S::Equipment] },
    Special { name: "Smoke Bomb",                    ends_combat: true,  sections: &[S::Equipment, S::EndCombat] },
    Special { name: "Medkit",                        ends_combat: false, sections: &[S::Escape] },
    // ART
    Special { name: "Attack Prediction",             ends_combat: true,  sections: &[S::EndCombat] },
    Special { name: "Pacifism",                      ends_combat: true,  sections: &[S::EndCombat, S::Modify] },
    Special { name: "Premonition",                   ends_combat: false, sections: &[S::ChangeCombatants] },
    // PREMEDITATED DEFENCE
    Special { name: "Body Guard",                    ends_combat: false, sections: &[S::ChangeCombatants] },
    Special { name: "Point Guard",                   ends_combat: false, sections: &[S::ChangeCombatants] },
    Special { name: "Rear Guard",                    ends_combat: false, sections: &[S::ChangeCombatants] },
    // COMBAT EVENTS
    Special { name: "Clumsiness",                    ends_combat: false, sections: &[S::ChangeCombatants] },
    Special { name: "Minefield",                     ends_combat: true,  sections: &[S::EndCombat] },
    Special { name: "Shelter of the Crowd",          ends_combat: true,  sections: &[S::ChangeCombatants, S::EndCombat] },
    Special { name: "Turn of Events",                ends_combat: false, sections: &[S::Modify] },
    Special { name: "Ambush",                        ends_combat: false, sections: &[S::NonSimultaneous] },
    Special { name: "Surprise Attack",               ends_combat: false, sections: &[S::NonSimultaneous] },
];

/// Card names match the list whatever their case and spacing.
fn special(card: &str) -> Option<&'static Special> {
    SPECIAL_CARDS.iter().find(|s| same_words(s.name, card))
}

/// The same words, whatever the case and the spacing between them
/// (compared word by word, without building either string).
fn same_words(a: &str, b: &str) -> bool {
    let (mut x, mut y) = (a.split_whitespace(), b.split_whitespace());
    loop {
        match (x.next(), y.next()) {
            (None, None) => return true,
            (Some(p), Some(q)) if p.chars().flat_map(char::to_lowercase).eq(q.chars().flat_map(char::to_lowercase)) => {
            }
            _ => return false,
        }
    }
}

// ---------------------------------------------------------------------------
// State.
// ---------------------------------------------------------------------------

/// Which breakdown a combat is following.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    /// COMBAT BREAKDOWN.
    Main,
    /// NON-SIMULTANEOUS COMBAT BREAKDOWN up to the end of the FIRST COMBAT.
    FirstCombat,
    /// The SECOND COMBAT.
    SecondCombat,
}

impl Part {
    fn script(self) -> &'static [Step] {
        match self {
            Part::Main => MAIN,
            Part::FirstCombat => FIRST,
            Part::SecondCombat => SECOND,
        }
    }
}

/// A question the text leaves to a judge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "about")]
pub enum Pending {
    /// Standing strike-order cards disagree on who strikes first.
    StrikeOrder { cards: Vec<u64> },
    /// Standing combatant changes disagree.
    Combatants { cards: Vec<u64> },
    /// Standing award modifications disagree.
    Award { seat: String, cards: Vec<u64> },
}

impl Pending {
    fn what(&self) -> &'static str {
        match self {
            Pending::StrikeOrder { .. } => "strike_order",
            Pending::Combatants { .. } => "combatants",
            Pending::Award { .. } => "award",
        }
    }
    fn describe(&self) -> String {
        match self {
            Pending::StrikeOrder { cards } => format!(
                "strike-order cards {cards:?} still stand and disagree on who strikes first; the text does not say which wins"
            ),
            Pending::Combatants { cards } => {
                format!("combatant changes {cards:?} still stand and disagree; the text does not say which wins")
            }
            Pending::Award { seat, cards } => format!(
                "award modifications {cards:?} for {seat} still stand and disagree; the text does not say which wins"
            ),
        }
    }
}

/// The ordering of strikes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    Simultaneous,
    NonSimultaneous { first: String, second: String },
}

/// What one (sub-)combat determined.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Determined {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub standing: Option<Vec<Rating>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub results: Option<Vec<Outcome>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<Vec<Outcome>>,
    /// Points finally awarded in this (sub-)combat, by seat.
    pub points: BTreeMap<String, u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Combat {
    pub number: u64,
    pub attacking_player: String,
    pub defending_player: String,
    pub attacker: String,
    pub defender: String,
    pub order: Order,
    pub part: Part,
    /// Index into the part's step table.
    #[serde(default, skip_serializing_if = "crate::json::outside_snapshot")]
    at: usize,
    pub step: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<Window>,
    /// Part of the breakdown the effects now played belong to (counters answer only within it).
    pub scope: u64,
    /// First scope of the current (sub-)combat: step 37 counts modifiers from here.
    sub_scope: u64,
    pub effects: Ledger,
    /// What each card effect said (new combatants, first player, saved warrior, points).
    /// Shared between copies of the state until a card is played (as the
    /// ledger's effects are: replay copies the state at every event).
    plays: Arc<BTreeMap<u64, Play>>,
    /// The battle tactic of this round of steps 2-15: cleared when the
    /// combatants change, as the round is repeated and it is announced again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub battle_tactic: Option<(u64, String)>,
    /// The warzone of this round of steps 2-15, as `battle_tactic`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warzone: Option<(u64, Option<String>)>,
    /// What every battle tactic and warzone announcement of the combat named
    /// ("none" for no warzone), by seq: the board names the announcements of
    /// an earlier round of steps 2-15 too. Shared between copies, as `plays` is.
    #[serde(default)]
    pub announced: Arc<BTreeMap<u64, String>>,
    /// Shared between copies of the state, as `plays` is.
    pub equipment: Arc<BTreeMap<String, Vec<String>>>,
    /// How many times steps 2-15 were repeated because combatants changed.
    pub repeats: u64,
    /// The combat-ending card that ended the combat.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ended_by: Option<u64>,
    /// The announcement step a combat-ending card interrupted (step 24 or
    /// 26): where the combat resumes if the card is countered.
    #[serde(default, skip_serializing_if = "crate::json::outside_snapshot")]
    resume: Option<usize>,
    /// The award being made at 45/47: (seq of the award, points).
    #[serde(skip_serializing_if = "Option::is_none")]
    award: Option<(u64, u64)>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub awaiting_ruling: Option<Pending>,
    pub first_combat: Determined,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub second_combat: Option<Determined>,
}

/// Seats, judges and points are shared between copies of the state until
/// they change (seldom: a judge added, a combat's points awarded), as the
/// finished combat is: replay copies the state at every event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct State {
    pub seats: Arc<[String]>,
    pub judges: Arc<[String]>,
    pub points: Arc<BTreeMap<String, u64>>,
    pub combat: Option<Combat>,
    /// How many combats are finished, and the last (see [`Finished`]).
    pub finished: Finished,
}

/// The finished combats: how many, and the last one. The rules read no more
/// (the next combat's number, the board between combats), and every finished
/// combat stays in the record, where `replay` and `log` show it step by step.
/// Keeping them all in the state made a long game's state, and so `state`,
/// each snapshot and each copy the append path folds on, grow with the game
/// (26 MB of JSON at 1,000,000 events). The last combat is shared
/// between successive states, so a copy of the state does not copy it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Finished {
    /// How many combats are finished.
    pub count: u64,
    /// The combat finished last.
    pub last: Option<Arc<Combat>>,
}

impl Finished {
    pub fn len(&self) -> usize {
        self.count as usize
    }
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
    /// The combat finished last.
    pub fn last(&self) -> Option<&Combat> {
        self.last.as_deref()
    }
    pub fn push(&mut self, combat: Combat) {
        self.count += 1;
        self.last = Some(Arc::new(combat));
    }
}

// ---------------------------------------------------------------------------
// The reducer.
// ---------------------------------------------------------------------------

pub fn open(header: &Header) -> Result<State, String> {
    if header.seats.len() < 2 {
        return Err("Doomtrooper needs at least two seats".into());
    }
    if !header.options.is_empty() {
        return Err("Doomtrooper takes no ruleset options".into());
    }
    Ok(State {
        seats: header.seat_ids().into(),
        judges: header.judges.clone().into(),
        points: Arc::new(header.seats.iter().map(|s| (s.id.clone(), 0)).collect()),
        combat: None,
        finished: Finished::default(),
    })
}

/// Members of a combat the board does not show (`board::board` reads
/// neither the step nor who holds priority): a change to them alone leaves
/// the board as it was (`rules::Table::board_unchanged_by`).
pub const UNSEEN_ON_BOARD: &[&str] =
    &["state.combat.window", "state.combat.step", "state.combat.scope", "state.combat.sub_scope"];

// What replay shows changed from one state to the next (`delta::Changes`):
// the state is what `state` and replay show (the finished combats as a count
// and the last), so it is compared member by member.
crate::changes_by_member!(kept State { combat: nested, finished: nested, judges, points: map, seats });

crate::changes_by_member!(kept Combat {
    announced: map,
    attacker: leaf,
    attacking_player: leaf,
    awaiting_ruling: optional,
    award: optional,
    battle_tactic: optional,
    defender: leaf,
    defending_player: leaf,
    effects: nested,
    ended_by: optional,
    equipment: map,
    first_combat: nested,
    number: leaf,
    order,
    part,
    plays: map,
    repeats: leaf,
    scope: leaf,
    second_combat: optional_nested,
    step: leaf,
    sub_scope: leaf,
    warzone: optional,
    window: optional_nested,
});

// What a (sub-)combat determined fills in member by member as the combat
// goes on: compared so, not written whole at each change.
crate::changes_by_member!(kept Determined { points: map, results: optional, standing: optional, status: optional });

/// The last finished combat is the same `Arc` from one state to the next
/// until another combat ends: compared by address, not read.
impl crate::delta::Changes for Finished {
    fn changes_into(&self, after: &Self, differ: &mut crate::delta::Differ) {
        if self.count != after.count {
            differ.under("count", |d| d.leaf(&self.count, &after.count));
        }
        let same = match (&self.last, &after.last) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (a, b) => a.is_none() && b.is_none(),
        };
        if !same {
            differ.under("last", |d| self.last.changes_into(&after.last, d));
        }
    }
}

/// The last finished combat is shared, as the state after has it.
impl crate::delta::CatchUp for Finished {
    fn catch_up(&mut self, after: &Self, found: &mut crate::delta::Found) {
        found.member("count", &mut self.count, &after.count, |d, a, b| d.leaf(a, b));
        found.under("last", |f| self.last.catch_up(&after.last, f));
    }
}

impl State {
    /// Applies one event's action. Pure: the new state, or why not.
    pub fn apply(&self, seq: u64, actor: &str, action: &serde_json::Value) -> Result<State, Violation> {
        kernel::apply(self, State::view, NAME, action, |s, a: &Action| s.step(seq, actor, a))
    }

    /// [`State::apply`] on this state: every step checks before it changes
    /// anything, so a refusal leaves the state as it was.
    pub fn apply_in_place(&mut self, seq: u64, actor: &str, action: &serde_json::Value) -> Result<(), Violation> {
        kernel::apply_in_place(self, State::view, NAME, action, |s, a: &Action| s.step(seq, actor, a))
    }

    fn step(&mut self, seq: u64, actor: &str, action: &Action) -> Result<(), Refusal> {
        let Some(combat) = self.combat.as_mut() else {
            return self.start_combat(seq, actor, action);
        };
        let others = combat.others(&self.seats);
        let judge = self.judges.iter().any(|j| j == actor);
        if combat.act(seq, actor, judge, &others, action)? {
            combat.leave(seq);
            combat.settle(&others, seq);
        }
        if combat.is_over() {
            let done = self.combat.take().expect("combat");
            for d in std::iter::once(&done.first_combat).chain(done.second_combat.as_ref()) {
                for (seat, p) in &d.points {
                    *Arc::make_mut(&mut self.points).entry(seat.clone()).or_default() += p;
                }
            }
            self.finished.push(done);
        }
        Ok(())
    }

    fn start_combat(&mut self, seq: u64, actor: &str, action: &Action) -> Result<(), Refusal> {
        const RULE: &str = "step 1: Attacking player announces Attacker and Defender";
        let Action::Announce(Announce::Combat { defending_player, attacker, defender }) = action else {
            return refuse(
                RULE,
                "no combat is under way; the next action is step 1, an announcement of attacker and defender",
            );
        };
        if !self.seats.iter().any(|s| s == actor) {
            return refuse(RULE, format!("{actor} is not a seat; only a player attacks"));
        }
        if !self.seats.contains(defending_player) || defending_player == actor {
            return refuse(RULE, format!("the defending player must be another seat, not {defending_player:?}"));
        }
        check_name("attacker", attacker).or_else(|m| refuse(RULE, m))?;
        check_name("defender", defender).or_else(|m| refuse(RULE, m))?;
        let mut combat = Combat {
            number: self.finished.len() as u64 + 1,
            attacking_player: actor.to_string(),
            defending_player: defending_player.clone(),
            attacker: attacker.clone(),
            defender: defender.clone(),
            order: Order::Simultaneous,
            part: Part::Main,
            at: 0,
            step: String::new(),
            window: None,
            scope: seq,
            sub_scope: seq,
            effects: Ledger::default(),
            plays: Arc::default(),
            battle_tactic: None,
            warzone: None,
            announced: Arc::default(),
            equipment: Arc::default(),
            repeats: 0,
            ended_by: None,
            resume: None,
            award: None,
            awaiting_ruling: None,
            first_combat: Determined::default(),
            second_combat: None,
        };
        let others: Vec<String> =
            self.seats.iter().filter(|s| *s != actor && *s != defending_player).cloned().collect();
        combat.settle(&others, seq);
        self.combat = Some(combat);
        Ok(())
    }

    /// The window's order of priority (seat ids), when one is open: the
    /// text's roles in its order, "other players" in the header's seat order.
    pub fn priority(&self) -> Vec<String> {
        let window = self.combat.as_ref().and_then(|c| c.window.as_ref());
        window.filter(|w| !w.is_closed()).map(|w| w.order.to_vec()).unwrap_or_default()
    }

    /// The step of the procedure the game is at (what [`State::view`]
    /// says first, without working out who may act: replay shows the step
    /// of every event).
    pub fn step_ref(&self) -> StepRef {
        let Some(c) = &self.combat else {
            return StepRef {
                number: "1".into(),
                title: "ANNOUNCE ATTACKER AND DEFENDER".into(),
                reference: "Doomtrooper step 1 (ANNOUNCE ATTACKER AND DEFENDER)".into(),
            };
        };
        let s = c.current();
        let part = match c.part {
            Part::Main => "",
            // END COMBAT (20-23) comes before the text's FIRST COMBAT heading.
            Part::FirstCombat if c.at < FIRST_COMBAT_FROM => "non-simultaneous breakdown, ",
            Part::FirstCombat => "non-simultaneous breakdown, first combat, ",
            Part::SecondCombat => "non-simultaneous breakdown, second combat, ",
        };
        let plural = if s.no.contains('-') { "steps " } else { "step " };
        let title = s.section.title();
        // "Doomtrooper {part}{plural} {no} ({title})", joined by hand:
        // replay asks for the step after every event, and `format!` cost
        // twice as much.
        let mut reference = String::with_capacity(32 + part.len() + s.no.len() + title.len());
        for piece in ["Doomtrooper ", part, plural, s.no, " (", title, ")"] {
            reference.push_str(piece);
        }
        StepRef { number: s.no.into(), title: title.into(), reference }
    }

    /// Where the game is, who may act, what is legal.
    pub fn view(&self) -> View {
        let step = self.step_ref();
        let Some(c) = &self.combat else {
            return View {
                step,
                may_act: self.seats.to_vec(),
                legal: vec![ActionType::Announce],
                awaiting_ruling: None,
            };
        };
        let s = c.current();
        if let Some(p) = &c.awaiting_ruling {
            return View {
                step,
                may_act: self.judges.to_vec(),
                legal: vec![ActionType::Resolve],
                awaiting_ruling: Some(p.describe()),
            };
        }
        let others = c.others(&self.seats);
        let (may_act, legal) = match s.does {
            Does::Announce(role, _, kinds) => {
                let mut legal = vec![ActionType::Announce];
                if !kinds.is_empty() {
                    legal.push(ActionType::Play);
                }
                (c.seats(role, &others), legal)
            }
            Does::Window(..) | Does::Plays(..) | Does::Awards(..) => {
                let (_, may) = s.window().expect("window step");
                let holder = c.holder().map(str::to_string);
                let mut legal = BTreeSet::new();
                // While a combat-ending card stands, only counters and passes (gap 2).
                let ending = c.ending_card().is_some();
                if let Some(h) = &holder {
                    legal.insert(ActionType::Pass);
                    for (role, m) in may.iter() {
                        if c.plays(*role, &others, h) {
                            match m {
                                May::Play(_) if ending => {}
                                // A save needs a warrior wounded or killed to name.
                                May::Play(kinds)
                                    if kinds.iter().any(|k| *k != Kind::Save || c.harmed().next().is_some()) =>
                                {
                                    _ = legal.insert(ActionType::Play)
                                }
                                May::Play(_) => {}
                                // A counter needs something to name.
                                May::Counter(a) if c.counter_targets(s, *a, &others).next().is_some() => {
                                    _ = legal.insert(ActionType::Counter)
                                }
                                May::Counter(_) => {}
                            }
                        }
                    }
                }
                (holder.into_iter().collect(), legal.into_iter().collect())
            }
            Does::Determine(_) => {
                let mut who = vec![c.recorder().to_string()];
                who.extend(self.judges.iter().cloned());
                (who, vec![ActionType::Resolve])
            }
            Does::Award(role) => {
                let mut who = c.seats(role, &others);
                who.extend(self.judges.iter().cloned());
                (who, vec![ActionType::Resolve])
            }
        };
        View { step, may_act, legal, awaiting_ruling: None }
    }
}

impl Combat {
    fn current(&self) -> Step {
        self.part.script()[self.at]
    }

    /// "Other players": every seat but the two in combat, in the header's seat order.
    fn others(&self, seats: &[String]) -> Vec<String> {
        seats.iter().filter(|s| **s != self.attacking_player && **s != self.defending_player).cloned().collect()
    }

    /// The player with priority in the window now open.
    fn holder(&self) -> Option<&str> {
        self.window.as_ref().and_then(|w| w.holder())
    }

    /// What `actor` may do in a window whose roles may do `may`.
    fn may_of(&self, may: &[(Role, May)], others: &[String], actor: &str) -> Vec<May> {
        may.iter().filter(|(r, _)| self.plays(*r, others, actor)).map(|(_, m)| *m).collect()
    }

    fn seats(&self, role: Role, others: &[String]) -> Vec<String> {
        self.seat_refs(role, others).iter().map(|s| s.to_string()).collect()
    }

    /// Whether `actor` plays `role` (without building the list of seats).
    fn plays(&self, role: Role, others: &[String], actor: &str) -> bool {
        match self.seat_of(role) {
            Some(seat) => seat == actor,
            None => others.iter().any(|o| o == actor),
        }
    }

    fn seat_refs<'a>(&'a self, role: Role, others: &'a [String]) -> Vec<&'a str> {
        match self.seat_of(role) {
            Some(seat) => vec![seat],
            None => others.iter().map(String::as_str).collect(),
        }
    }

    /// The one seat of a role; None for "other players".
    fn seat_of(&self, role: Role) -> Option<&str> {
        let (first, second) = match &self.order {
            Order::NonSimultaneous { first, second } => (first, second),
            Order::Simultaneous => (&self.attacking_player, &self.defending_player),
        };
        match role {
            Attacking => Some(&self.attacking_player),
            Defending => Some(&self.defending_player),
            Others => None,
            First => Some(first),
            Second => Some(second),
        }
    }

    /// Who records what the table determined (gap 1).
    fn recorder(&self) -> &str {
        match &self.order {
            Order::NonSimultaneous { first, .. } => first,
            Order::Simultaneous => &self.attacking_player,
        }
    }

    fn warrior_of(&self, seat: &str) -> &str {
        if seat == self.attacking_player { &self.attacker } else { &self.defender }
    }

    fn determined(&mut self) -> &mut Determined {
        match self.part {
            Part::SecondCombat => self.second_combat.get_or_insert_with(Determined::default),
            _ => &mut self.first_combat,
        }
    }

    /// Sets up the current step: a window opens with its players in order.
    fn enter(&mut self, others: &[String], seq: u64) {
        let s = self.current();
        self.step = s.no.to_string();
        let prev_section = self.at.checked_sub(1).map(|i| self.part.script()[i].section);
        if prev_section != Some(s.section) {
            // A new part of the breakdown: counters answer only within it.
            self.scope = seq;
        }
        self.window =
            s.window().map(|(order, _)| Window::new(order.iter().flat_map(|r| self.seats(*r, others)).collect()));
    }

    /// Applies the action to the current step; true when the step is complete.
    fn act(&mut self, seq: u64, actor: &str, judge: bool, others: &[String], action: &Action) -> Result<bool, Refusal> {
        if let Some(pending) = self.awaiting_ruling.clone() {
            return self.rule(actor, judge, &pending, action, others, seq);
        }
        let s = self.current();
        match s.does {
            Does::Announce(role, what, kinds) => {
                let who = self.seats(role, others);
                if !who.iter().any(|w| w == actor) {
                    return refuse(rule_text(s), format!("only {} acts at this step, not {actor}", who.join(", ")));
                }
                match action {
                    Action::Announce(a) => self.announce(seq, actor, what, a, s).map(|()| true),
                    Action::Play(p) if !kinds.is_empty() => {
                        self.play(seq, actor, p, kinds, s)?;
                        // A combat-ending card ends the step at once (combat IMMEDIATELY
                        // ends): no announcement follows it. If the next window
                        // nullifies it, the announcement is still owed (gap 2).
                        let ends = matches!(p, Play::EndCombat { .. });
                        if ends {
                            self.resume = Some(self.at);
                        }
                        Ok(ends)
                    }
                    _ => refuse(rule_text(s), format!("the step's action is an announcement ({what})")),
                }
            }
            Does::Window(..) | Does::Plays(..) | Does::Awards(..) => {
                let (_, may) = s.window().expect("window step");
                let holder = self.holder().unwrap_or_default().to_string();
                if holder != actor {
                    return refuse(rule_text(s), format!("it is {holder}'s turn to act or pass, not {actor}'s"));
                }
                let mine = self.may_of(&may, others, actor);
                match action {
                    Action::Pass {} => {
                        self.window.as_mut().expect("window").pass();
                        Ok(self.window.as_ref().is_some_and(Window::is_closed))
                    }
                    Action::Play(p) => {
                        let kinds = play_kinds(&mine);
                        if kinds.is_empty() {
                            return refuse(
                                rule_text(s),
                                format!("{actor} may not play card effects here, only counter or pass"),
                            );
                        }
                        self.play(seq, actor, p, &kinds, s)?;
                        self.window.as_mut().expect("window").played();
                        // In a step of one player ("X may play card effects to End
                        // Combat") a combat-ending card completes the step: the next
                        // window answers it (gap 2).
                        Ok(matches!(s.does, Does::Plays(..)) && matches!(p, Play::EndCombat { .. }))
                    }
                    Action::Counter { card, target } => {
                        let Some(answers) = counter_answers(&mine) else {
                            return refuse(rule_text(s), format!("{actor} may not counter here"));
                        };
                        self.counter(seq, actor, card, *target, answers, others, s)?;
                        self.window.as_mut().expect("window").played();
                        Ok(false)
                    }
                    _ => refuse(rule_text(s), "in this window a player plays, counters or passes"),
                }
            }
            Does::Determine(what) => {
                if actor != self.recorder() && !judge {
                    return refuse(
                        "gap 1 (module docs): the attacking player (first player once non-simultaneous) or a judge records what the table determined",
                        format!("{actor} may not record this determination"),
                    );
                }
                match action {
                    Action::Resolve(r) => self.determine(what, r, s, judge).map(|()| true),
                    _ => refuse(rule_text(s), format!("this step is recorded as a resolve ({what})")),
                }
            }
            Does::Award(role) => {
                let who = self.seats(role, others);
                if !who.iter().any(|w| w == actor) && !judge {
                    return refuse(
                        rule_text(s),
                        format!("the award is recorded by {} (or a judge), not {actor}", who.join(", ")),
                    );
                }
                match action {
                    Action::Resolve(Resolve::Award { points }) => {
                        self.award = Some((seq, *points));
                        self.effects.push(Effect {
                            seq,
                            seat: who[0].clone(),
                            card: None,
                            kind: "award".into(),
                            counters: None,
                            scope: self.scope,
                        });
                        Ok(true)
                    }
                    _ => refuse(rule_text(s), "this step is recorded as a resolve (award) with the points earned"),
                }
            }
        }
    }

    fn announce(&mut self, seq: u64, actor: &str, what: &str, a: &Announce, s: Step) -> Result<(), Refusal> {
        let effect = |kind: &str| Effect {
            seq,
            seat: actor.to_string(),
            card: None,
            kind: kind.into(),
            counters: None,
            scope: self.scope,
        };
        match (what, a) {
            ("battle_tactic", Announce::BattleTactic { tactic }) => {
                check_name("battle tactic", tactic).or_else(|m| refuse(rule_text(s), m))?;
                self.effects.push(effect("battle_tactic"));
                self.battle_tactic = Some((seq, tactic.clone()));
                Arc::make_mut(&mut self.announced).insert(seq, tactic.clone());
            }
            ("warzone", Announce::Warzone { warzone }) => {
                if let Some(w) = warzone {
                    check_name("warzone", w).or_else(|m| refuse(rule_text(s), m))?;
                }
                self.effects.push(effect("warzone"));
                self.warzone = Some((seq, warzone.clone()));
                Arc::make_mut(&mut self.announced).insert(seq, warzone.clone().unwrap_or_else(|| "none".into()));
            }
            ("equipment", Announce::Equipment { items }) => {
                for i in items {
                    check_name("equipment", i).or_else(|m| refuse(rule_text(s), m))?;
                }
                self.effects.push(effect("equipment_used"));
                Arc::make_mut(&mut self.equipment).insert(actor.to_string(), items.clone());
            }
            _ => return refuse(rule_text(s), format!("this step announces {what}")),
        }
        Ok(())
    }

    fn play(&mut self, seq: u64, actor: &str, p: &Play, allowed: &[Kind], s: Step) -> Result<(), Refusal> {
        let (card, kind) = p.card_and_kind();
        check_name("card", card).or_else(|m| refuse(rule_text(s), m))?;
        // Which effects the step allows comes first, so a refusal names the
        // rule of the step (a save at step 34 is refused because saves belong
        // to ESCAPE WOUNDING, not because its warrior was not wounded).
        self.no_ending_card()?;
        step_allows(actor, card, kind, allowed, s)?;
        // Then what the effect names.
        match p {
            Play::ChangeCombatants { attacker, defender, .. } => {
                if attacker.is_none() && defender.is_none() {
                    return refuse(rule_text(s), "a change of combatants names the new attacker, defender or both");
                }
                for w in attacker.iter().chain(defender) {
                    check_name("warrior", w).or_else(|m| refuse(rule_text(s), m))?;
                }
            }
            Play::StrikeOrder { first: Some(f), .. } if !self.may_strike_first(f) => {
                return refuse(
                    rule_text(s),
                    format!("the first player must be the attacking or defending player, not {f}"),
                );
            }
            Play::Save { warrior, .. } if !self.harmed().any(|w| w == warrior) => {
                return refuse(
                    "step 38: card effects \"save\" wounded and/or killed warriors",
                    format!("{warrior} was not wounded or killed in this combat"),
                );
            }
            _ => {}
        }
        self.effects.push(Effect {
            seq,
            seat: actor.to_string(),
            card: Some(card.clone()),
            kind: kind.name().into(),
            counters: None,
            scope: self.scope,
        });
        Arc::make_mut(&mut self.plays).insert(seq, p.clone());
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn counter(
        &mut self,
        seq: u64,
        actor: &str,
        card: &str,
        target: u64,
        answers: Answers,
        others: &[String],
        s: Step,
    ) -> Result<(), Refusal> {
        check_name("card", card).or_else(|m| refuse(COUNTER_RULE, m))?;
        let t = self.counter_target(target, s)?;
        counter_card_allowed(card, s)?;
        self.answers_effect(t, answers, others)?;
        self.effects.push(Effect {
            seq,
            seat: actor.to_string(),
            card: Some(card.to_string()),
            kind: "counter".into(),
            counters: Some(target),
            scope: self.scope,
        });
        Ok(())
    }

    /// The effect a counter names: one of the current part of the breakdown
    /// (counters answer only within it).
    fn counter_target(&self, target: u64, s: Step) -> Result<&Effect, Refusal> {
        let Some(t) = self.effects.get(target) else {
            return refuse(
                COUNTER_RULE,
                format!("seq {target} is not a card effect of this combat that can be countered"),
            );
        };
        if t.scope != self.scope {
            return refuse(
                COUNTER_RULE,
                format!(
                    "seq {target} belongs to an earlier part of the breakdown; a counter answers a just-played card of {}",
                    s.section.title()
                ),
            );
        }
        Ok(t)
    }

    /// Whether a player who counters `answers` may counter `t` (steps 13 and 14).
    /// The effects a counter of this step may name, oldest first: of the
    /// current part of the breakdown, and of the players it answers. The
    /// view lists `counter` only when there is one; the moves offer them.
    fn counter_targets<'a>(
        &'a self,
        s: Step,
        answers: Answers,
        others: &'a [String],
    ) -> impl DoubleEndedIterator<Item = &'a Effect> + 'a {
        self.effects
            .effects
            .iter()
            .filter(move |e| self.counter_target(e.seq, s).is_ok() && self.answers_effect(e, answers, others).is_ok())
    }

    fn answers_effect(&self, t: &Effect, answers: Answers, others: &[String]) -> Result<(), Refusal> {
        match answers {
            Answers::Any => {}
            Answers::EffectsOf(role) => {
                if !self.plays(role, others, &t.seat) {
                    return refuse(
                        "step 13: Attacking player may play card effects to counter Defending player's actions",
                        format!("seq {} is not the defending player's", t.seq),
                    );
                }
            }
            Answers::Combatants => {
                if t.seat != self.attacking_player && t.seat != self.defending_player {
                    return refuse(
                        "step 14: Other players may play card effects to counter either players' action",
                        format!("seq {} is not the attacking or defending player's", t.seq),
                    );
                }
            }
        }
        Ok(())
    }

    /// Card effects are played only while no combat-ending card stands
    /// (gap 2): then only counters to it, or passes.
    fn no_ending_card(&self) -> Result<(), Refusal> {
        match self.ending_card() {
            Some(ending) => refuse(
                "Once a COMBAT ENDING CARD is played, combat IMMEDIATELY ends and proceed to step 37",
                format!(
                    "the combat-ending card played at seq {ending} still stands: only counters to it, or passes, are legal now"
                ),
            ),
            None => Ok(()),
        }
    }

    /// The first player is one of the two in combat.
    fn may_strike_first(&self, seat: &str) -> bool {
        seat == self.attacking_player || seat == self.defending_player
    }

    /// What this (sub-)combat determined so far.
    fn determined_now(&self) -> Option<&Determined> {
        match self.part {
            Part::SecondCombat => self.second_combat.as_ref(),
            _ => Some(&self.first_combat),
        }
    }

    /// The warriors a save may name: "save" wounded and/or killed warriors,
    /// only those two fates, at step 37 of this (sub-)combat.
    fn harmed(&self) -> impl Iterator<Item = &str> {
        let results = self.determined_now().and_then(|d| d.results.as_deref()).unwrap_or_default();
        results.iter().filter(|o| matches!(o.outcome, Fate::Wounded | Fate::Killed)).map(|o| o.warrior.as_str())
    }

    /// The combatants, each named once in a determination.
    fn combatants(&self) -> BTreeSet<&str> {
        [self.attacker.as_str(), self.defender.as_str()].into()
    }

    /// The modifiers of this (sub-)combat that no standing counter
    /// nullified: what step 37 counts.
    fn standing_modifiers(&self) -> BTreeSet<u64> {
        let sub = self.sub_scope;
        self.effects.standing_of(Kind::Modify.name(), None).filter(|e| e.scope >= sub).map(|e| e.seq).collect()
    }

    /// The saves of this (sub-)combat that still stand, by warrior.
    fn standing_saves(&self) -> BTreeMap<String, u64> {
        let sub = self.sub_scope;
        self.effects
            .standing_of(Kind::Save.name(), None)
            .filter(|e| e.scope >= sub)
            .filter_map(|e| match self.plays.get(&e.seq) {
                Some(Play::Save { warrior, .. }) => Some((warrior.clone(), e.seq)),
                _ => None,
            })
            .collect()
    }

    /// Whether `warrior`'s status at step 44 may be `outcome`, given the
    /// saves that stand (`saved`): its result at step 37, or, where a save
    /// stands, milder (gap 9).
    fn status_allowed(
        &self,
        warrior: &str,
        outcome: Fate,
        saved: &BTreeMap<String, u64>,
        judge: bool,
    ) -> Result<(), Refusal> {
        const RULE: &str = "step 44: Wounded warriors are rotated, killed warriors are discarded, and those removed from play are removed";
        let results = self.determined_now().and_then(|d| d.results.as_deref()).unwrap_or_default();
        let result = results.iter().find(|r| r.warrior == warrior).map_or(Fate::Unharmed, |r| r.outcome);
        match saved.get(warrior) {
            None if result != outcome => refuse(
                RULE,
                format!(
                    "{warrior} was {result:?} at step 37 and no save that still stands names it, so its status cannot be {outcome:?}"
                ),
            ),
            // A save that stands means the warrior escaped the fate it
            // was saved from; what it became instead (wounded,
            // unharmed) is the card's, so the table records it (gap 9).
            // A judge may record otherwise: that is a ruling, on the record.
            Some(save) if !outcome.milder_than(result) && !judge => refuse(
                RULE,
                format!(
                    "the save at seq {save} still stands and names {warrior}, which was {result:?} at step 37: its status must be milder than that, not {outcome:?} (a judge may rule otherwise)"
                ),
            ),
            _ => Ok(()),
        }
    }

    /// A standing combat-ending card of the current part of the breakdown.
    fn ending_card(&self) -> Option<u64> {
        self.effects.standing_of(Kind::EndCombat.name(), Some(self.scope)).map(|e| e.seq).next()
    }

    fn determine(&mut self, what: &str, r: &Resolve, s: Step, judge: bool) -> Result<(), Refusal> {
        let warriors = self.combatants();
        let names = |list: Vec<&str>| -> Result<(), Refusal> {
            let set: BTreeSet<&str> = list.iter().copied().collect();
            if set.len() != list.len() || set != warriors {
                return refuse(
                    rule_text(s),
                    format!(
                        "name each combatant ({}) exactly once",
                        warriors.iter().copied().collect::<Vec<_>>().join(", ")
                    ),
                );
            }
            Ok(())
        };
        match (what, r) {
            ("standing", Resolve::Standing { ratings }) => {
                names(ratings.iter().map(|x| x.warrior.as_str()).collect())?;
                self.determined().standing = Some(ratings.clone());
            }
            ("results", Resolve::Results { results, counted }) => {
                names(results.iter().map(|x| x.warrior.as_str()).collect())?;
                let sub = self.sub_scope;
                let standing = self.standing_modifiers();
                let counted_set: BTreeSet<u64> = counted.iter().copied().collect();
                if counted_set.len() != counted.len() || counted_set != standing {
                    let countered: Vec<u64> = self
                        .effects
                        .effects
                        .iter()
                        .filter(|e| e.kind == Kind::Modify.name() && e.scope >= sub && !standing.contains(&e.seq))
                        .map(|e| e.seq)
                        .collect();
                    return refuse(
                        "step 37: Note which cards were countered by card effects and disregard those cards",
                        format!(
                            "the modifiers that still stand are {standing:?} (countered, to disregard: {countered:?}); counted {counted:?}"
                        ),
                    );
                }
                self.determined().results = Some(results.clone());
            }
            ("status", Resolve::Status { status }) => {
                names(status.iter().map(|x| x.warrior.as_str()).collect())?;
                let saved = self.standing_saves();
                for o in status {
                    self.status_allowed(&o.warrior, o.outcome, &saved, judge)?;
                }
                self.determined().status = Some(status.clone());
            }
            _ => {
                return refuse(rule_text(s), format!("this step is recorded as a resolve ({what})"));
            }
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// Moving through the breakdown.
// ---------------------------------------------------------------------------

impl Combat {
    fn is_over(&self) -> bool {
        self.at >= self.part.script().len()
    }

    fn goto(&mut self, no: &str) {
        self.at = self.part.script().iter().position(|s| s.no == no).expect("step in script");
    }

    /// Enters the current step; an empty window (no "other players") is
    /// complete at once, so moves on through it.
    fn settle(&mut self, others: &[String], seq: u64) {
        while self.awaiting_ruling.is_none() && !self.is_over() {
            self.enter(others, seq);
            if !self.window.as_ref().is_some_and(Window::is_closed) {
                return;
            }
            self.leave(seq);
        }
        if self.is_over() {
            self.window = None;
        }
    }

    /// The current step is complete: where does the text go next?
    fn leave(&mut self, seq: u64) {
        let s = self.current();
        // "Once a COMBAT ENDING CARD is played, combat IMMEDIATELY ends and
        // proceed to step 37" (gap 2): the window that may counter the card
        // (the card's own window, or the step after the one that played it)
        // is the last one that runs.
        if self.ended_by.is_none() && s.section != Section::Resolve && s.answers_cards() {
            if let Some(card) = self.ending_card() {
                self.ended_by = Some(card);
                self.resume = None;
                self.goto("37");
                return;
            }
            // The card was nullified: an announcement it interrupted is still owed.
            if let Some(at) = self.resume.take() {
                self.at = at;
                return;
            }
        }
        match (self.part, s.no) {
            // "IF COMBATANTS ARE CHANGED, REPEAT STEPS 2-15."
            (Part::Main, "12-15") => {
                let changes: Vec<u64> =
                    self.effects.standing_of(Kind::ChangeCombatants.name(), Some(self.scope)).map(|e| e.seq).collect();
                let (mut attackers, mut defenders) = (BTreeSet::new(), BTreeSet::new());
                for q in &changes {
                    if let Some(Play::ChangeCombatants { attacker, defender, .. }) = self.plays.get(q) {
                        attackers.extend(attacker.clone());
                        defenders.extend(defender.clone());
                    }
                }
                if attackers.len() > 1 || defenders.len() > 1 {
                    self.awaiting_ruling = Some(Pending::Combatants { cards: changes });
                    return;
                }
                let attacker = attackers.pop_first().unwrap_or_else(|| self.attacker.clone());
                let defender = defenders.pop_first().unwrap_or_else(|| self.defender.clone());
                self.change_combatants(attacker, defender);
            }
            // "IF COMBAT IS NON-SIMULTANEOUS, GO TO THE NON-SIMULTANEOUS COMBAT BREAKDOWN."
            (Part::Main, "19") => {
                let cards: Vec<u64> =
                    self.effects.standing_of(Kind::StrikeOrder.name(), Some(self.scope)).map(|e| e.seq).collect();
                let firsts: BTreeSet<Option<String>> = cards
                    .iter()
                    .filter_map(|q| match self.plays.get(q) {
                        Some(Play::StrikeOrder { first, .. }) => Some(first.clone()),
                        _ => None,
                    })
                    .collect();
                if firsts.len() > 1 {
                    self.awaiting_ruling = Some(Pending::StrikeOrder { cards });
                    return;
                }
                self.set_order(firsts.into_iter().next().flatten());
            }
            (_, "46" | "48") => {
                let (award_seq, points) = self.award.take().expect("award made before its window");
                let seat = self.effects.get(award_seq).expect("award effect").seat.clone();
                let cards: Vec<u64> =
                    self.effects.standing_of(Kind::ModifyAward.name(), Some(self.scope)).map(|e| e.seq).collect();
                let modified: BTreeSet<u64> = cards
                    .iter()
                    .filter_map(|q| match self.plays.get(q) {
                        Some(Play::ModifyAward { points, .. }) => Some(*points),
                        _ => None,
                    })
                    .collect();
                if !self.effects.stands(award_seq) {
                    self.give_points(&seat, 0, seq);
                } else if modified.len() > 1 {
                    self.award = Some((award_seq, points));
                    self.awaiting_ruling = Some(Pending::Award { seat, cards });
                } else {
                    let points = modified.into_iter().next().unwrap_or(points);
                    self.give_points(&seat, points, seq);
                }
            }
            _ => self.at += 1,
        }
    }

    fn change_combatants(&mut self, attacker: String, defender: String) {
        if attacker == self.attacker && defender == self.defender {
            self.at += 1;
        } else {
            self.attacker = attacker;
            self.defender = defender;
            self.repeats += 1;
            // "REPEAT STEPS 2-15": the round's battle tactic and warzone are
            // announced again; the earlier ones no longer stand.
            self.battle_tactic = None;
            self.warzone = None;
            self.goto("2");
        }
    }

    fn set_order(&mut self, first: Option<String>) {
        match first {
            None => self.at += 1,
            Some(first) => {
                let second = if first == self.attacking_player {
                    self.defending_player.clone()
                } else {
                    self.attacking_player.clone()
                };
                self.order = Order::NonSimultaneous { first, second };
                self.part = Part::FirstCombat;
                self.at = 0;
            }
        }
    }

    /// The award is final: credit it, then move on ("IF SECOND WARRIOR IS STILL ALIVE, PROCEED").
    fn give_points(&mut self, seat: &str, points: u64, seq: u64) {
        *self.determined().points.entry(seat.to_string()).or_default() += points;
        if self.part != Part::FirstCombat {
            self.at += 1;
            return;
        }
        let Order::NonSimultaneous { second, .. } = &self.order else {
            unreachable!("first combat is non-simultaneous")
        };
        let second_warrior = self.warrior_of(second).to_string();
        let alive = self
            .first_combat
            .status
            .iter()
            .flatten()
            .find(|o| o.warrior == second_warrior)
            .is_none_or(|o| o.outcome.alive());
        if alive && self.ended_by.is_none() {
            self.part = Part::SecondCombat;
            self.at = 0;
            self.sub_scope = seq;
        } else {
            self.at = self.part.script().len();
        }
    }

    /// A judge answers what the text leaves open (gap 4).
    fn rule(
        &mut self,
        actor: &str,
        judge: bool,
        pending: &Pending,
        action: &Action,
        others: &[String],
        seq: u64,
    ) -> Result<bool, Refusal> {
        const RULE: &str = "the text is silent here (module docs, gap 4): the game waits for a judge's ruling";
        if !judge {
            return refuse(RULE, format!("{actor} is not a judge; {}", pending.describe()));
        }
        match (pending, action) {
            (Pending::StrikeOrder { .. }, Action::Resolve(Resolve::StrikeOrder { first })) => {
                if let Some(f) = first
                    && !self.may_strike_first(f)
                {
                    return refuse(
                        RULE,
                        format!("the first player must be the attacking or defending player, not {f}"),
                    );
                }
                self.awaiting_ruling = None;
                self.set_order(first.clone());
            }
            (Pending::Combatants { .. }, Action::Resolve(Resolve::Combatants { attacker, defender })) => {
                check_name("warrior", attacker).or_else(|m| refuse(RULE, m))?;
                check_name("warrior", defender).or_else(|m| refuse(RULE, m))?;
                self.awaiting_ruling = None;
                self.change_combatants(attacker.clone(), defender.clone());
            }
            (Pending::Award { seat, .. }, Action::Resolve(Resolve::Award { points })) => {
                self.awaiting_ruling = None;
                self.award = None;
                self.give_points(&seat.clone(), *points, seq);
            }
            _ => {
                return refuse(RULE, format!("the ruling awaited is a resolve with \"what\": \"{}\"", pending.what()));
            }
        }
        self.settle(others, seq);
        Ok(false)
    }
}

const COUNTER_RULE: &str = "the term \"counter\" refers to cards which NULLIFY a just-played card";

/// A counter's card: a special card only in the steps named for it.
fn counter_card_allowed(card: &str, s: Step) -> Result<(), Refusal> {
    match special(card) {
        Some(sp) if !sp.sections.contains(&s.section) => refuse(
            "special cards at the end of the text",
            format!("{} is not played during {}", sp.name, s.section.title()),
        ),
        _ => Ok(()),
    }
}

/// Which effects a step allows, whatever they name: the special cards at the
/// end of the text only in the steps named there (and the combat-ending ones
/// only as `end_combat`), every other card only as a kind the step allows
/// `actor` to play.
fn step_allows(actor: &str, card: &str, kind: Kind, allowed: &[Kind], s: Step) -> Result<(), Refusal> {
    match special(card) {
        Some(sp) if special_fits(sp, kind, allowed, s) => return Ok(()),
        Some(sp) => {
            if !sp.sections.contains(&s.section) {
                let named: Vec<_> = sp.sections.iter().map(|x| x.title()).collect();
                return refuse(
                    "special cards at the end of the text",
                    format!(
                        "{} is played during {} only, and this is {}",
                        sp.name,
                        named.join(" or "),
                        s.section.title()
                    ),
                );
            }
            if sp.ends_combat != (kind == Kind::EndCombat) {
                let should = if sp.ends_combat {
                    "is a COMBAT ENDING CARD: play it as end_combat"
                } else {
                    "is not a combat-ending card"
                };
                return refuse("special cards at the end of the text", format!("{} {should}", sp.name));
            }
            if !sp.ends_combat && !allowed.contains(&kind) {
                return refuse(rule_text(s), format!("{actor} may not play a {} effect here", kind.name()));
            }
        }
        None if !allowed.contains(&kind) => {
            let rule = match kind {
                Kind::Modify => "Cards which modify are played in the COMBAT MODIFICATION STEP",
                Kind::Save => {
                    "steps 38, 40, 42: card effects \"save\" wounded and/or killed warriors in ESCAPE WOUNDING"
                }
                _ => rule_text(s),
            };
            let may: Vec<_> = allowed.iter().map(|k| k.name()).collect();
            return refuse(
                rule,
                format!(
                    "a {} effect is not legal here ({}); {actor} may play: {}",
                    kind.name(),
                    s.section.title(),
                    may.join(", ")
                ),
            );
        }
        None => {}
    }
    Ok(())
}

/// Whether special card `sp` may be played as `kind` at step `s`: the three
/// checks of [`step_allows`], without building its refusals (the moves
/// ask it of every special card at every append, offer-first).
fn special_fits(sp: &Special, kind: Kind, allowed: &[Kind], s: Step) -> bool {
    sp.sections.contains(&s.section)
        && sp.ends_combat == (kind == Kind::EndCombat)
        && (sp.ends_combat || allowed.contains(&kind))
}

/// The kinds of effect a player who may do `mine` may play.
fn play_kinds(mine: &[May]) -> Vec<Kind> {
    mine.iter()
        .flat_map(|m| match m {
            May::Play(k) => k.to_vec(),
            _ => vec![],
        })
        .collect()
}

/// Whose effects a player who may do `mine` may counter, if it may counter.
fn counter_answers(mine: &[May]) -> Option<Answers> {
    mine.iter().find_map(|m| match m {
        May::Counter(a) => Some(*a),
        _ => None,
    })
}

/// The text of each step, quoted in refusals.
fn rule_text(s: Step) -> &'static str {
    match s.no {
        "2" => "step 2: Attacking player announces Battle Tactic",
        "3-6" => {
            "steps 3-6: Defending player, then attacking player, then other players may play card effects to counter; continue until all players pass"
        }
        "7" => "step 7: Defending player announces if Defender will defend from a Warzone, and which one",
        "8-11" => {
            "steps 8-11: Attacking player, then defending player, then other players may play card effects to counter; continue until all players pass"
        }
        "12-15" => {
            "steps 12-15: Defending player may play card effects to change Attacker and/or Defender; Attacking player may counter Defending player's actions; other players may counter either players' action; continue until all players pass"
        }
        "16" | "18" => "steps 16/18: the player named may play card effects to alter strike order",
        "17" | "19" => "steps 17/19: the other combatant, then others, may play card effects to counter",
        "20" | "22" | "28" | "30" => "END COMBAT: the player named may play card effects to End Combat",
        "21" | "23" | "29" | "31" => "END COMBAT: the player named, then others, may play card effects to counter",
        "24" | "26" => "steps 24/26: the player named announces which IN PLAY Equipment will be used",
        "25" | "27" => "steps 25/27: the other players counter and continue until all players pass",
        "32" => "step 32: Determine combat standing",
        "33-36" => "steps 33-36: players play card effects to modify combat, in order, until all players pass",
        "37" => "step 37: Determine final combat standings based on the cumulative effects of all cards played",
        "38" | "40" | "42" => {
            "ESCAPE WOUNDING: the player named may play card effects to \"save\" wounded and/or killed warriors"
        }
        "39" | "41" | "43" => {
            "ESCAPE WOUNDING: players may play card effects to counter, in order, until all players pass"
        }
        "44" => {
            "step 44: Wounded warriors are rotated, killed warriors are discarded, and those removed from play are removed"
        }
        "45" | "47" => "steps 45/47: the player named is awarded any points earned",
        "46" | "48" => {
            "steps 46/48: the other players may counter or modify the awarding; continue until all players pass"
        }
        _ => "the combat breakdown",
    }
}
