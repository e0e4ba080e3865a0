//! The ruleset that `docs/adding-a-ruleset.md` walks through: a duel of a
//! few steps, written against the registry's `Ruleset` trait and the
//! kernel alone (a step table, a window of priority, moves), as a new
//! ruleset module would be. The tests hold it to what every ruleset is held
//! to: its sample's every action is offered just before it, and every
//! action built from a move is accepted or refused for a typed value.
//!
//! The duel's text (made up for this template):
//!
//! 1. CHALLENGE: either player challenges the other.
//! 2. RESPONSES: the challenged player, then the challenger, may each play
//!    one card or pass, until both pass in a row.
//! 3. ROLL: the challenger rolls one die (1 to 6). 4 or more: the
//!    challenger wins; less: the challenged player wins.

use arbiter::event::Header;
use arbiter::kernel::{self, Choice, Entry, EntryKind, Move, Pick, Refusal, StepRef, View, Violation, Window, refuse};
use arbiter::rules::Ruleset;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The payloads (`schemas/duel/action.schema.json` if it were registered).
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Action {
    Announce { challenged: String },
    Play { card: String },
    Pass {},
    Resolve { roll: i64 },
}

/// The text's steps, in its words: what the reducer and the moves read.
pub struct Step {
    pub number: &'static str,
    pub title: &'static str,
    pub rule: &'static str,
}

pub const STEPS: &[Step] = &[
    Step { number: "1", title: "CHALLENGE", rule: "1: either player challenges the other" },
    Step { number: "2", title: "RESPONSES", rule: "2: one card or a pass each, until both pass in a row" },
    Step { number: "3", title: "ROLL", rule: "3: the challenger rolls one die; 4 or more wins" },
];

/// Serialize and Deserialize: the fold keeps snapshots of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct State {
    pub seats: Vec<String>,
    /// Index into STEPS.
    pub at: usize,
    pub challenger: Option<String>,
    pub window: Option<Window>,
    pub cards: Vec<(u64, String, String)>,
    pub winner: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Board {
    pub step: String,
    pub winner: Option<String>,
}

impl State {
    fn step(&self) -> &'static Step {
        &STEPS[self.at]
    }

    /// Who may act at this step: the one source of the view and the moves.
    fn may_act(&self) -> Vec<String> {
        match (self.at, &self.winner) {
            (_, Some(_)) => vec![],
            (0, _) => self.seats.clone(),
            (1, _) => self.window.as_ref().and_then(Window::holder).map(String::from).into_iter().collect(),
            _ => self.challenger.clone().into_iter().collect(),
        }
    }

    fn act(&mut self, seq: u64, actor: &str, action: &Action) -> Result<(), Refusal> {
        let rule = self.step().rule;
        if !self.may_act().iter().any(|a| a == actor) {
            return refuse(rule, format!("{actor} may not act now"));
        }
        match (self.at, action) {
            (0, Action::Announce { challenged }) => {
                if challenged == actor || !self.seats.contains(challenged) {
                    return refuse(rule, format!("challenged: {challenged} is not the other player"));
                }
                self.challenger = Some(actor.to_string());
                self.window = Some(Window::new(vec![challenged.clone(), actor.to_string()]));
                self.at = 1;
            }
            (1, Action::Play { card }) => {
                arbiter::event::check_name("card", card).or_else(|m| refuse(rule, m))?;
                self.cards.push((seq, actor.to_string(), card.clone()));
                self.window.as_mut().expect("a window at step 2").played();
            }
            (1, Action::Pass {}) => {
                let window = self.window.as_mut().expect("a window at step 2");
                window.pass();
                if window.is_closed() {
                    self.at = 2;
                }
            }
            (2, Action::Resolve { roll }) => {
                if !(1..=6).contains(roll) {
                    return refuse(rule, format!("roll: one die shows 1 to 6, not {roll}"));
                }
                let challenger = self.challenger.clone().expect("a challenger at step 3");
                let other = self.seats.iter().find(|s| **s != challenger).cloned().expect("two seats");
                self.winner = Some(if *roll >= 4 { challenger } else { other });
            }
            _ => return refuse(rule, "not an action of this step"),
        }
        Ok(())
    }

    fn view(&self) -> View {
        let s = self.step();
        let legal = match self.at {
            0 => vec![arbiter::event::ActionType::Announce],
            1 => vec![arbiter::event::ActionType::Play, arbiter::event::ActionType::Pass],
            _ => vec![arbiter::event::ActionType::Resolve],
        };
        View {
            step: StepRef { number: s.number.into(), title: s.title.into(), reference: format!("Duel {}", s.number) },
            may_act: self.may_act(),
            legal: if self.winner.is_some() { vec![] } else { legal },
            awaiting_ruling: None,
        }
    }
}

/// The duel, as a ruleset: one type, one impl of the registry's trait.
pub struct Duel;

impl Ruleset for Duel {
    const NAME: &'static str = "duel";
    const VERSION: u64 = 1;
    const TITLE: &'static str = "Duel";
    const DOCUMENT: &'static str = "the template's three steps";
    const SAMPLE: &'static str = concat!(
        r#"{"actor": "organiser", "action": {"type": "open", "ruleset": "duel", "ruleset_version": 1, "seats": [{"id": "p1", "name": "Ann"}, {"id": "p2", "name": "Ben"}]}}"#,
        "\n",
        r#"{"actor": "p1", "action": {"type": "announce", "challenged": "p2"}}"#,
        "\n",
        r#"{"actor": "p2", "action": {"type": "play", "card": "Parry"}}"#,
        "\n",
        r#"{"actor": "p1", "action": {"type": "pass"}}"#,
        "\n",
        r#"{"actor": "p2", "action": {"type": "pass"}}"#,
        "\n",
        r#"{"actor": "p1", "action": {"type": "resolve", "roll": 5}}"#,
        "\n",
    );
    type State = State;
    type Action = Action;
    type Board = Board;

    fn open(header: &Header) -> Result<State, String> {
        if header.seats.len() != 2 {
            return Err("a duel is between two players".into());
        }
        Ok(State { seats: header.seat_ids(), at: 0, challenger: None, window: None, cards: vec![], winner: None })
    }

    fn apply(state: &State, seq: u64, actor: &str, action: &Value) -> Result<State, Violation> {
        kernel::apply(state, State::view, Self::NAME, action, |s, a: &Action| s.act(seq, actor, a))
    }

    /// The duel gives a judge no action of its own, so it keeps no judges.
    fn set_judges(_state: &mut State, _judges: &[String]) {}

    fn view(state: &State) -> View {
        state.view()
    }

    /// From the same step table and `may_act` as the reducer.
    fn moves(state: &State, header: &Header) -> Vec<Move> {
        let mut moves = vec![];
        for actor in state.may_act() {
            match state.at {
                0 => {
                    let others = header
                        .seats
                        .iter()
                        .filter(|s| s.id != actor)
                        .map(|s| Pick::new(s.id.clone(), header.name_of(&s.id)))
                        .collect();
                    moves.push(
                        Move::new(&actor, "challenge", json!({"type": "announce"}))
                            .choosing(Choice::one("challenged", others)),
                    );
                }
                1 => {
                    moves.push(Move::new(&actor, "pass", json!({"type": "pass"})));
                    moves.push(Move::new(&actor, "play a card", json!({"type": "play"})).entering(Entry::new(
                        "card",
                        EntryKind::Card,
                        "the card",
                    )));
                }
                _ => moves.push(Move::new(&actor, "roll the die", json!({"type": "resolve"})).entering(Entry::number(
                    "roll",
                    EntryKind::Roll,
                    "the die",
                    Some(1),
                    Some(6),
                ))),
            }
        }
        moves
    }

    fn board(state: &State, header: &Header) -> Board {
        Board { step: state.step().title.into(), winner: state.winner.as_ref().map(|w| header.name_of(w)) }
    }

    fn outcome(board: &Board) -> Vec<(String, String)> {
        vec![("winner".into(), board.winner.clone().unwrap_or_else(|| "-".into()))]
    }

    fn changes(before: &Board, after: &Board) -> Vec<String> {
        if before == after { vec![] } else { vec![format!("now at {}", after.step)] }
    }
}

/// The sample's lines: (actor, action), the header first.
fn sample<R: Ruleset>() -> Vec<(String, Value)> {
    R::SAMPLE
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (v["actor"].as_str().unwrap().to_string(), v["action"].clone())
        })
        .collect()
}

/// Through the trait alone: every action of R's sample is offered just before it.
fn every_sample_action_is_offered<R: Ruleset>() -> R::State {
    let lines = sample::<R>();
    let header: Header = serde_json::from_value(lines[0].1.clone()).unwrap();
    let mut state = R::open(&header).unwrap();
    for (seq, (actor, action)) in lines.iter().enumerate().skip(1) {
        let moves = R::moves(&state, &header);
        assert!(
            moves.iter().any(|m| m.seat == *actor && m.admits(action).is_ok()),
            "seq {seq}: no move of {actor} admits {action}"
        );
        state = R::apply(&state, seq as u64, actor, action).unwrap_or_else(|v| panic!("seq {seq}: {v}"));
    }
    state
}

#[test]
fn a_ruleset_written_against_the_trait_offers_every_action_of_its_sample() {
    let state = every_sample_action_is_offered::<Duel>();
    let header: Header = serde_json::from_value(sample::<Duel>()[0].1.clone()).unwrap();
    assert_eq!(Duel::outcome(&Duel::board(&state, &header)), vec![("winner".to_string(), "Ann (p1)".to_string())]);
    assert!(Duel::moves(&state, &header).is_empty(), "nothing is left to do once the die is rolled");
}

#[test]
fn its_moves_are_sound_and_a_roll_out_of_bounds_is_refused_naming_it() {
    let lines = sample::<Duel>();
    let header: Header = serde_json::from_value(lines[0].1.clone()).unwrap();
    let mut state = Duel::open(&header).unwrap();
    // Every move built with in-bounds values is accepted at each point of the sample.
    for (seq, (actor, action)) in lines.iter().enumerate().skip(1) {
        for m in Duel::moves(&state, &header) {
            let values: Vec<(String, Value)> = m
                .choose
                .iter()
                .map(|c| (c.field.clone(), c.options[0].value.clone()))
                .chain(m.enter.iter().map(|e| {
                    let v = if e.kind == EntryKind::Roll { json!(e.max.unwrap()) } else { json!("Feint") };
                    (e.field.clone(), v)
                }))
                .collect();
            let built = m.build(&values);
            assert_eq!(m.admits(&built), Ok(()));
            assert!(Duel::apply(&state, seq as u64, &m.seat, &built).is_ok(), "{} {built} was refused", m.seat);
        }
        state = Duel::apply(&state, seq as u64, actor, action).unwrap();
        if seq == lines.len() - 2 {
            // At the roll: out of bounds, the move does not admit it and the reducer names the value.
            let roll = json!({"type": "resolve", "roll": 7});
            let m = &Duel::moves(&state, &header)[0];
            assert!(m.admits(&roll).unwrap_err().contains("the die"), "{:?}", m.admits(&roll));
            let refused = Duel::apply(&state, seq as u64 + 1, "p1", &roll).unwrap_err();
            assert!(refused.message.contains("roll"), "{refused}");
        }
    }
}

#[test]
fn its_schemas_come_from_the_trait() {
    let paths: Vec<String> = Duel::schemas().into_iter().map(|(p, _)| p).collect();
    assert_eq!(paths, ["duel/action.schema.json", "duel/board.schema.json"]);
}
