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
use crate::event::Header;
use crate::kernel::{Move, View, Violation};

/// One ruleset: its names, its document and sample, and the functions the
/// rest of arbiter calls besides its reducer (`State::apply`).
pub trait Ruleset {
    /// The name in a header's `ruleset` and in `--ruleset`.
    const NAME: &'static str;
    /// The version this build implements (a header names the version it was recorded under).
    const VERSION: u64;
    /// The game's name as its players write it ("Raw Deal").
    const TITLE: &'static str;
    /// The document in `shared/rules/` it follows, in words ("the timing breakdown").
    const DOCUMENT: &'static str;
    /// The bundled sample game: JSON Lines of `{"actor", "action"}`, the header first.
    const SAMPLE: &'static str;

    /// The reducer's state.
    type State;
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
    /// Where the game is, who may act, what is legal.
    fn view(state: &Self::State) -> View;
    /// What each seat and judge may record now (`kernel::moves`).
    fn moves(state: &Self::State, header: &Header) -> Vec<Move>;
    fn board(state: &Self::State, header: &Header) -> Self::Board;
    /// The outcome in the board's words, the result first.
    fn outcome(board: &Self::Board) -> Vec<(String, String)>;
    /// What changed from one board to the next, in the board's words.
    fn changes(before: &Self::Board, after: &Self::Board) -> Vec<String>;

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
    ($ty:ident, $module:ident, $title:literal, $document:literal, $sample:literal) => {
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
        }
    };
}

// The samples (examples/*.jsonl, written by tools/make-samples.py):
// Doomtrooper: a three-player combat (a battle tactic countered, a change of
// combatants that repeats steps 2-15, a non-simultaneous combat), then a
// second combat ended by Smoke Bomb. WTactics: an attack with a combat that
// needs a judge's ruling. Riftbound: a showdown without combat, then a combat
// with triggers, a chain, Tank damage and a conquest. Raw Deal: a maneuver
// reversed by a nested breakdown, then a Multi card. GURPS: ties by DX and by
// a roll, two seconds of combat, a knock-out, a drop out.
ruleset!(Doomtrooper, doomtrooper, "Doomtrooper", "the Mother of all combat breakdowns", "doomtrooper-sample.jsonl");
ruleset!(Wtactics, wtactics, "WTactics", "combat", "wtactics-sample.jsonl");
ruleset!(Riftbound, riftbound, "Riftbound", "combat and showdowns", "riftbound-sample.jsonl");
ruleset!(Rawdeal, rawdeal, "Raw Deal", "the timing breakdown", "rawdeal-sample.jsonl");
ruleset!(Gurps, gurps, "GURPS", "the combat turn sequence", "gurps-sample.jsonl");

/// Builds [`Kind`], one variant per ruleset type, with what each says of
/// itself. A match on `Kind` is where the compiler points when a ruleset is
/// added.
macro_rules! registry {
    ($($ty:ident),* $(,)?) => {
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
    };
}

registry!(Doomtrooper, Wtactics, Riftbound, Rawdeal, Gurps);

impl Kind {
    /// The ruleset a header names, if this build knows it.
    pub fn named(name: &str) -> Option<Kind> {
        Kind::ALL.iter().copied().find(|k| k.name() == name)
    }
}
