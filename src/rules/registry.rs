//! The registry: every ruleset this build knows, each one type that
//! implements [`Ruleset`], listed once in [`registry!`]'s call below.
//!
//! The rest of arbiter finds a ruleset through [`Kind`] (parsed from a
//! header's name, never matched on the name as a string): its document,
//! its sample, its schemas, its board and outcome. `docs/adding-a-ruleset.md`
//! walks through adding one.

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{doomtrooper, gurps, rawdeal, riftbound, wtactics};
use crate::delta::{Changes, Differ, Found};
use crate::event::Header;
use crate::kernel::{Move, StepRef, View, Violation};

/// One ruleset: its names, its document and sample, and the functions the
/// rest of arbiter calls besides its reducer (`State::apply`).
pub trait Ruleset {
    /// The name in a header's `ruleset` and in `--ruleset`.
    const NAME: &'static str;
    /// The version this build records new games under (a header names the version it was recorded under).
    const VERSION: u64;
    /// The versions whose games this build folds: the current one, and
    /// older ones whose games it keeps folding as they were recorded.
    const FOLDS: &'static [u64] = &[Self::VERSION];
    /// The game's name as its players write it ("Raw Deal").
    const TITLE: &'static str;
    /// The document in `shared/rules/` it follows, in words ("the timing breakdown").
    const DOCUMENT: &'static str;
    /// The bundled sample game: JSON Lines of `{"actor", "action"}`, the header first.
    const SAMPLE: &'static str;

    /// The reducer's state (kept in snapshots: it reads back as written).
    type State: Clone + PartialEq + std::fmt::Debug + Serialize + DeserializeOwned + Send + Sync + 'static;
    /// The payloads it accepts (`schemas/NAME/action.schema.json`).
    type Action: JsonSchema;
    /// The state as a judge draws it (`schemas/NAME/board.schema.json`).
    type Board: JsonSchema + Serialize + DeserializeOwned;

    /// The state after event 0, or why the header does not suit the ruleset.
    fn open(header: &Header) -> Result<Self::State, String>;
    /// The reducer: the state after event `seq`, `actor`'s `action`, or
    /// why it is refused (nothing changes). The kernel has already checked
    /// that the actor is a seat or judge and the type is known.
    fn apply(state: &Self::State, seq: u64, actor: &str, action: &Value) -> Result<Self::State, Violation>;
    /// [`Ruleset::apply`] on the state itself, for the fold that keeps only
    /// the newest state; a refusal leaves it as it was.
    fn apply_in_place(state: &mut Self::State, seq: u64, actor: &str, action: &Value) -> Result<(), Violation> {
        *state = Self::apply(state, seq, actor, action)?;
        Ok(())
    }
    /// The judges as they stand (a ruling may add one): who may rule.
    fn set_judges(state: &mut Self::State, judges: &[String]);
    /// Where the game is, who may act, what is legal.
    fn view(state: &Self::State) -> View;
    /// What each seat and judge may record now (`kernel::moves`).
    fn moves(state: &Self::State, header: &Header) -> Vec<Move>;
    fn board(state: &Self::State, header: &Header) -> Self::Board;
    /// The outcome in the board's words, the result first.
    fn outcome(board: &Self::Board) -> Vec<(String, String)>;
    /// What changed from one board to the next, in the board's words.
    fn changes(before: &Self::Board, after: &Self::Board) -> Vec<String>;

    /// The step the game is at: the view's, where the ruleset cannot say it
    /// more cheaply.
    fn step(state: &Self::State) -> StepRef {
        Self::view(state).step
    }
    /// The order of priority in the window open now, by seat id (empty
    /// where the ruleset keeps no such order).
    fn priority(_state: &Self::State) -> Vec<String> {
        vec![]
    }
    /// What the ruleset recorded in words for the event at `seq`, beyond
    /// the action (Riftbound's scores), in the players' names; `log` and `replay` show it.
    fn said(_state: &Self::State, _header: &Header, _seq: u64) -> Vec<String> {
        vec![]
    }
    /// An action in the ruleset's own words (the board's: names, the card
    /// a seq is), said at `state`, the state before it; None where the
    /// generic [`super::describe`] says it (`rules::words`).
    fn words(_state: &Self::State, _header: &Header, _action: &Value) -> Option<String> {
        None
    }

    /// The state as replay compares it from event to event: by default the
    /// whole state. A ruleset whose histories grow writes a summary
    /// (`State::live`: a count and the last).
    fn live_json(state: &Self::State) -> Value {
        serde_json::to_value(state).expect("a state serialises")
    }
    /// What changed from `before` to `after`, as `delta::diff` finds it
    /// between their [`Ruleset::live_json`].
    fn changes_into(before: &Self::State, after: &Self::State, differ: &mut Differ) {
        differ.written(&Self::live_json(before), &Self::live_json(after));
    }
    /// Replay's copy of the state is caught up member by member
    /// ([`Ruleset::catch_up`]) rather than copied whole at each event.
    const CAUGHT_UP_IN_PLACE: bool = false;
    fn catch_up(kept: &mut Self::State, now: &Self::State, found: &mut Found) {
        found.differed(kept, now, |d, a, b| Self::changes_into(a, b, d));
    }
    /// The members of the state (paths in [`Ruleset::live_json`]) the board
    /// does not show: a change under them alone leaves the board as it was,
    /// and replay does not draw it again. Empty: drawn at every event.
    const UNSEEN_ON_BOARD: &'static [&'static str] = &[];

    /// The committed schemas: (path under `schemas/`, schema).
    fn schemas() -> Vec<(String, Value)> {
        let schema = |s: schemars::Schema| serde_json::to_value(s).expect("a schema serialises");
        vec![
            (format!("{}/action.schema.json", Self::NAME), schema(schemars::schema_for!(Self::Action))),
            (format!("{}/board.schema.json", Self::NAME), schema(schemars::schema_for!(Self::Board))),
        ]
    }
}

/// Implements [`Ruleset`] for a ruleset module whose functions have the
/// usual names (`open`, `moves`, `board`, `outcome`, `changes`,
/// `State::apply`, `State::view`).
macro_rules! ruleset {
    ($ty:ident, $module:ident, $title:literal, $document:literal, $sample:literal, { $($more:tt)* }) => {
        /// The ruleset of the module of the same name.
        pub struct $ty;

        impl Ruleset for $ty {
            const NAME: &'static str = $module::NAME;
            const VERSION: u64 = $module::VERSION;
            const TITLE: &'static str = $title;
            const DOCUMENT: &'static str = $document;
            const SAMPLE: &'static str = include_str!(concat!("../../examples/", $sample));
            type State = $module::State;
            type Action = $module::Action;
            type Board = $module::Board;

            fn open(header: &Header) -> Result<$module::State, String> {
                $module::open(header)
            }
            fn apply(
                state: &$module::State,
                seq: u64,
                actor: &str,
                action: &Value,
            ) -> Result<$module::State, Violation> {
                state.apply(seq, actor, action)
            }
            fn apply_in_place(state: &mut $module::State, seq: u64, actor: &str, action: &Value) -> Result<(), Violation> {
                state.apply_in_place(seq, actor, action)
            }
            fn set_judges(state: &mut $module::State, judges: &[String]) {
                state.judges = judges.to_vec().into();
            }
            fn view(state: &$module::State) -> View {
                state.view()
            }
            fn moves(state: &$module::State, header: &Header) -> Vec<Move> {
                $module::moves(state, header)
            }
            fn board(state: &$module::State, header: &Header) -> $module::Board {
                $module::board(state, header)
            }
            fn outcome(board: &$module::Board) -> Vec<(String, String)> {
                $module::outcome(board)
            }
            fn changes(before: &$module::Board, after: &$module::Board) -> Vec<String> {
                $module::changes(before, after)
            }
            $($more)*
        }
    };
}

/// The comparing of a ruleset whose state keeps growing histories: replay
/// compares its summary (`State::live`), not the whole state.
macro_rules! compared_live {
    () => {
        fn live_json(state: &Self::State) -> Value {
            serde_json::to_value(state.live()).expect("a state serialises")
        }
        fn changes_into(before: &Self::State, after: &Self::State, differ: &mut Differ) {
            before.live().changes_into(&after.live(), differ);
        }
    };
}

/// A ruleset's actions in its own words: `rules::words::<module>::words`.
macro_rules! said_in_words {
    ($module:ident) => {
        fn words(state: &Self::State, header: &Header, action: &Value) -> Option<String> {
            super::words::$module::words(state, header, action)
        }
    };
}

/// Builds [`Kind`], one variant per ruleset type, with what each says of
/// itself. A match on `Kind` is where the compiler points when a ruleset is
/// added.
macro_rules! registry {
    ($($ty:ident($module:ident, $title:literal, $document:literal, $sample:literal) { $($more:tt)* })*) => {
        $(ruleset!($ty, $module, $title, $document, $sample, { $($more)* });)*

        /// A ruleset this build knows.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Kind {
            $($ty),*
        }

        impl Kind {
            /// Every ruleset, in the order `--ruleset` lists them.
            pub const ALL: &'static [Kind] = &[$(Kind::$ty),*];

            pub fn name(self) -> &'static str {
                match self { $(Kind::$ty => <$ty as Ruleset>::NAME),* }
            }
            pub fn version(self) -> u64 {
                match self { $(Kind::$ty => <$ty as Ruleset>::VERSION),* }
            }
            /// Whether this build folds games recorded under `version` of the ruleset.
            pub fn folds(self, version: u64) -> bool {
                match self { $(Kind::$ty => <$ty as Ruleset>::FOLDS.contains(&version)),* }
            }
            pub fn title(self) -> &'static str {
                match self { $(Kind::$ty => <$ty as Ruleset>::TITLE),* }
            }
            pub fn document(self) -> &'static str {
                match self { $(Kind::$ty => <$ty as Ruleset>::DOCUMENT),* }
            }
            pub fn sample(self) -> &'static str {
                match self { $(Kind::$ty => <$ty as Ruleset>::SAMPLE),* }
            }
            pub fn schemas(self) -> Vec<(String, Value)> {
                match self { $(Kind::$ty => <$ty as Ruleset>::schemas()),* }
            }
        }

        /// Each ruleset's state, one variant per ruleset.
        #[derive(Debug, Clone, PartialEq, Serialize)]
        #[serde(untagged)]
        pub enum RulesetState {
            $($ty(<$ty as Ruleset>::State)),*
        }

        /// Each ruleset's board: the state as a judge would draw it.
        // Boards are built one or two at a time (a state, a replay step),
        // never kept in bulk: their variants' sizes do not matter.
        #[allow(clippy::large_enum_variant)]
        #[derive(Debug, Clone, PartialEq, Serialize)]
        #[serde(untagged)]
        pub enum Board {
            $($ty(<$ty as Ruleset>::Board)),*
        }

        impl Kind {
            /// `reader` run with this ruleset's state type (reading a
            /// snapshot straight into it: see `fold::Folder::from_snapshot`).
            pub fn read_with<R: StateReader>(self, reader: R) -> R::Out {
                match self { $(Kind::$ty => reader.read(RulesetState::$ty)),* }
            }
        }

        impl RulesetState {
            pub fn kind(&self) -> Kind {
                match self { $(RulesetState::$ty(_) => Kind::$ty),* }
            }
            /// The state after event 0 of a game of `kind`.
            pub fn open(kind: Kind, header: &Header) -> Result<RulesetState, String> {
                match kind { $(Kind::$ty => <$ty as Ruleset>::open(header).map(RulesetState::$ty)),* }
            }
            /// A state of `kind` as serde wrote it (a snapshot's).
            pub fn read(kind: Kind, value: Value) -> Result<RulesetState, serde_json::Error> {
                match kind { $(Kind::$ty => serde_json::from_value(value).map(RulesetState::$ty)),* }
            }
            pub fn apply(&self, seq: u64, actor: &str, action: &Value) -> Result<RulesetState, Violation> {
                match self { $(RulesetState::$ty(s) => <$ty as Ruleset>::apply(s, seq, actor, action).map(RulesetState::$ty)),* }
            }
            pub fn apply_in_place(&mut self, seq: u64, actor: &str, action: &Value) -> Result<(), Violation> {
                match self { $(RulesetState::$ty(s) => <$ty as Ruleset>::apply_in_place(s, seq, actor, action)),* }
            }
            pub fn set_judges(&mut self, judges: &[String]) {
                match self { $(RulesetState::$ty(s) => <$ty as Ruleset>::set_judges(s, judges)),* }
            }
            pub fn view(&self) -> View {
                match self { $(RulesetState::$ty(s) => <$ty as Ruleset>::view(s)),* }
            }
            pub fn step(&self) -> StepRef {
                match self { $(RulesetState::$ty(s) => <$ty as Ruleset>::step(s)),* }
            }
            pub fn priority(&self) -> Vec<String> {
                match self { $(RulesetState::$ty(s) => <$ty as Ruleset>::priority(s)),* }
            }
            pub fn said(&self, header: &Header, seq: u64) -> Vec<String> {
                match self { $(RulesetState::$ty(s) => <$ty as Ruleset>::said(s, header, seq)),* }
            }
            pub fn words(&self, header: &Header, action: &Value) -> Option<String> {
                match self { $(RulesetState::$ty(s) => <$ty as Ruleset>::words(s, header, action)),* }
            }
            pub fn moves(&self, header: &Header) -> Vec<Move> {
                match self { $(RulesetState::$ty(s) => <$ty as Ruleset>::moves(s, header)),* }
            }
            pub fn board(&self, header: &Header) -> Board {
                match self { $(RulesetState::$ty(s) => Board::$ty(<$ty as Ruleset>::board(s, header))),* }
            }
            pub fn live_json(&self) -> Value {
                match self { $(RulesetState::$ty(s) => <$ty as Ruleset>::live_json(s)),* }
            }
            /// What changed from `self` to `after`; two states of one game
            /// are of one ruleset, and were they not, the whole state changed.
            pub fn changes_into(&self, after: &RulesetState, differ: &mut Differ) {
                match (self, after) {
                    $((RulesetState::$ty(a), RulesetState::$ty(b)) => <$ty as Ruleset>::changes_into(a, b, differ),)*
                    #[allow(unreachable_patterns)]
                    (a, b) => differ.written(&a.live_json(), &b.live_json()),
                }
            }
            /// Whether replay's copy of this state is caught up in place.
            pub fn caught_up_in_place(&self) -> bool {
                match self { $(RulesetState::$ty(_) => <$ty as Ruleset>::CAUGHT_UP_IN_PLACE),* }
            }
            /// Brings replay's copy up to `now` (of the same ruleset).
            pub fn catch_up(&mut self, now: &RulesetState, found: &mut Found) {
                match (self, now) {
                    $((RulesetState::$ty(a), RulesetState::$ty(b)) => <$ty as Ruleset>::catch_up(a, b, found),)*
                    #[allow(unreachable_patterns)]
                    (a, b) => found.differed(a, b, |d, a, b| a.changes_into(b, d)),
                }
            }
            pub fn unseen_on_board(&self) -> &'static [&'static str] {
                match self { $(RulesetState::$ty(_) => <$ty as Ruleset>::UNSEEN_ON_BOARD),* }
            }
        }

        impl Board {
            /// The outcome in the board's words, as (label, value) rows, the
            /// result (points, scores, control) first: what `diff` compares first.
            pub fn outcome(&self) -> Vec<(String, String)> {
                match self { $(Board::$ty(b) => <$ty as Ruleset>::outcome(b)),* }
            }
            /// What changed from `before` to `self`, in the board's words.
            pub fn changes_since(&self, before: &Board) -> Vec<String> {
                match (before, self) {
                    $((Board::$ty(b), Board::$ty(a)) => <$ty as Ruleset>::changes(b, a),)*
                    // Two boards of one game are of one ruleset.
                    #[allow(unreachable_patterns)]
                    _ => vec![],
                }
            }
        }
    };
}

// The rulesets: the type, its module, the game's name, the document it
// follows, and its sample (examples/*.actions.jsonl, written by
// tools/make-samples.py), then what it says otherwise than the defaults of
// `Ruleset`.
//
// The samples. Doomtrooper: a three-player combat (a battle tactic
// countered, a change of combatants that repeats steps 2-15, a
// non-simultaneous combat), then a second combat ended by Smoke Bomb.
// WTactics: an attack with a combat that needs a judge's ruling. Riftbound: a
// showdown without combat, then a combat with triggers, a chain, Tank damage
// and a conquest. Raw Deal: a maneuver reversed by a nested breakdown, then a
// Multi card. GURPS: ties by DX and by a roll, two seconds of combat, a
// knock-out, a drop out.
registry! {
    // Its state is compared and caught up member by member (its histories
    // are kept apart: see `doomtrooper::State`), and it says its step and
    // order of priority without building a view.
    Doomtrooper(doomtrooper, "Doomtrooper", "the Mother of all combat breakdowns", "doomtrooper-sample.actions.jsonl") {
        fn step(state: &doomtrooper::State) -> StepRef {
            state.step_ref()
        }
        fn priority(state: &doomtrooper::State) -> Vec<String> {
            state.priority()
        }
        fn changes_into(before: &doomtrooper::State, after: &doomtrooper::State, differ: &mut Differ) {
            before.changes_into(after, differ);
        }
        const CAUGHT_UP_IN_PLACE: bool = true;
        fn catch_up(kept: &mut doomtrooper::State, now: &doomtrooper::State, found: &mut Found) {
            crate::delta::CatchUp::catch_up(kept, now, found);
        }
        const UNSEEN_ON_BOARD: &'static [&'static str] = doomtrooper::UNSEEN_ON_BOARD;
        said_in_words!(doomtrooper);
    }
    Wtactics(wtactics, "WTactics", "combat", "wtactics-sample.actions.jsonl") {
        compared_live!();
        const FOLDS: &'static [u64] = wtactics::FOLDS;
        said_in_words!(wtactics);
    }
    Riftbound(riftbound, "Riftbound", "combat and showdowns", "riftbound-sample.actions.jsonl") {
        compared_live!();
        const FOLDS: &'static [u64] = riftbound::FOLDS;
        fn said(state: &riftbound::State, header: &Header, seq: u64) -> Vec<String> {
            riftbound::said(state, header, seq)
        }
        said_in_words!(riftbound);
    }
    Rawdeal(rawdeal, "Raw Deal", "the timing breakdown", "rawdeal-sample.actions.jsonl") { compared_live!(); said_in_words!(rawdeal); }
    Gurps(gurps, "GURPS", "the combat turn sequence", "gurps-sample.actions.jsonl") { compared_live!(); said_in_words!(gurps); }
}

/// Something read with a ruleset's own state type, chosen by [`Kind`]
/// ([`Kind::read_with`]): `wrap` makes the state read a [`RulesetState`].
pub trait StateReader {
    type Out;
    fn read<S: DeserializeOwned>(self, wrap: fn(S) -> RulesetState) -> Self::Out;
}

impl Kind {
    /// The ruleset a header names, if this build knows it.
    pub fn named(name: &str) -> Option<Kind> {
        Kind::ALL.iter().copied().find(|k| k.name() == name)
    }
}
