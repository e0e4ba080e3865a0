//! The rulesets, dispatched by one enum, and the fold that drives them.
//!
//! A ruleset is a pure reducer: `(state, event) -> new state | Violation`.
//! [`Table`] holds the header and the ruleset's state; [`Table::apply`]
//! does the checks every ruleset shares (the actor is a seat or judge, the
//! action type is known, `open` only at seq 0) and hands the rest to the
//! ruleset's own step script.

pub mod doomtrooper;
pub mod gurps;
pub mod rawdeal;
mod registry;
pub mod riftbound;
pub(crate) mod words;
pub mod wtactics;

pub use registry::{Board, Kind, Ruleset, RulesetState, StateReader};
pub use words::words;

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use crate::adjudication::{NoteRecord, PenaltyRecord, Ruling, RulingRecord};
use crate::delta::{Changes, Differ, Found};
use crate::event::{ActionType, Header};
use crate::kernel::{Move, StepRef, View, Violation};

/// A game's state after some prefix of its stream.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Table {
    /// The header, with the judges as they stand now (rulings may add judges).
    pub header: Header,
    pub state: RulesetState,
    /// Penalties recorded by judges' rulings. Like notes and judges added,
    /// they stand across rewinds: a rewind returns the combat, not the adjudication.
    pub penalties: Vec<PenaltyRecord>,
    /// Notes by seats and judges.
    pub notes: Vec<NoteRecord>,
    /// The rulings that stand: every rewind, penalty and judge added, and
    /// each decision whose effect a later rewind did not take back.
    pub rulings: Vec<RulingRecord>,
}

impl Table {
    /// The state after event 0.
    pub fn open(header: &Header) -> Result<Table, Violation> {
        let refuse = |message: String| Violation {
            step: StepRef { number: "0".into(), title: "open".into(), reference: "event 0 (the header)".into() },
            rule: "event 0 holds the header".into(),
            message,
            may_act: vec![],
            offered: vec![],
            may_act_names: vec![],
        };
        header.check().map_err(refuse)?;
        let kind = Kind::named(&header.ruleset).filter(|k| k.folds(header.ruleset_version));
        let state = match kind {
            Some(kind) => RulesetState::open(kind, header).map_err(refuse)?,
            None => {
                let known: Vec<String> = Kind::ALL.iter().map(|k| format!("{} v{}", k.name(), k.version())).collect();
                return Err(refuse(format!(
                    "unknown ruleset {} v{}; this arbiter knows {}",
                    header.ruleset,
                    header.ruleset_version,
                    known.join(", ")
                )));
            }
        };
        Ok(Table { header: header.clone(), state, penalties: vec![], notes: vec![], rulings: vec![] })
    }

    /// The state after event `seq` by `actor`, or why it is illegal.
    pub fn apply(&self, seq: u64, actor: &str, action: &Value) -> Result<Table, Violation> {
        self.check_action(actor, action).map_err(|v| self.named(v))?;
        let state = self.state.apply(seq, actor, action).map_err(|v| self.named(v))?;
        Ok(Table {
            header: self.header.clone(),
            state,
            penalties: self.penalties.clone(),
            notes: self.notes.clone(),
            rulings: self.rulings.clone(),
        })
    }

    /// [`Table::apply`] on this table, for a fold that keeps only the
    /// newest state: nothing but the ruleset's state changes, and a refusal
    /// changes nothing. Doomtrooper's steps check before they change
    /// anything, so its state takes the action in place; the other rulesets'
    /// steps run in place too, and a refusal is undone from a copy of the
    /// state without its histories (`kernel::apply_undoable`).
    pub fn apply_in_place(&mut self, seq: u64, actor: &str, action: &Value) -> Result<(), Violation> {
        self.check_action(actor, action).map_err(|v| self.named(v))?;
        if let Err(v) = self.state.apply_in_place(seq, actor, action) {
            return Err(self.named(v));
        }
        Ok(())
    }

    /// The checks every ruleset shares: the actor is a seat or judge, the
    /// action type is known and not `open`. The view (who may act) is built
    /// only for a refusal.
    fn check_action(&self, actor: &str, action: &Value) -> Result<(), Violation> {
        if !self.header.is_seat(actor) && !self.header.is_judge(actor) {
            let mut known = self.header.seat_ids();
            known.extend(self.header.judges.iter().cloned());
            return Err(Violation::new(
                &self.view(),
                "every actor is a seat or a judge of the header",
                format!("unknown actor {actor:?}; the seats and judges are {}", known.join(", ")),
            ));
        }
        let kind = action.get("type").and_then(Value::as_str).unwrap_or_default();
        match ActionType::parse(kind) {
            None => {
                let names: Vec<_> = ActionType::ALL.iter().map(|t| t.name()).collect();
                Err(Violation::new(
                    &self.view(),
                    "the kernel's action types",
                    format!("unknown action type {kind:?}; the types are {}", names.join(", ")),
                ))
            }
            Some(ActionType::Open) => {
                Err(Violation::new(&self.view(), "event 0 holds the header", "a game is opened once, at seq 0"))
            }
            Some(_) => Ok(()),
        }
    }

    /// Refuses a ruling by anyone but a judge of the game.
    pub fn check_judge(&self, actor: &str) -> Result<(), Violation> {
        if self.header.is_judge(actor) {
            return Ok(());
        }
        let judges = if self.header.judges.is_empty() { "none".to_string() } else { self.header.judges.join(", ") };
        Err(Violation::new(
            &self.view(),
            "only a judge named in the game's header (or added by a ruling) may rule",
            format!("{actor} is not a judge of this game (judges: {judges})"),
        ))
    }

    /// A note by a seat or judge: checked and kept; the combat does not change.
    pub fn note(&self, seq: u64, actor: &str, concerns: u64, text: &str) -> Result<Table, Violation> {
        self.check_note(actor, text)?;
        let mut next = self.clone();
        next.notes.push(NoteRecord { seq, by: actor.to_string(), concerns, text: text.to_string() });
        Ok(next)
    }

    /// A note by a seat or judge: checked, and the state does not change.
    pub fn check_note(&self, actor: &str, text: &str) -> Result<(), Violation> {
        if !self.header.is_seat(actor) && !self.header.is_judge(actor) {
            return Err(Violation::new(
                &self.view(),
                "any seat or judge may annotate any event",
                format!("{actor} is not a seat or judge of this game"),
            ));
        }
        crate::event::check_name("note", text).map_err(|m| Violation::new(&self.view(), "a note has text", m))
    }

    /// Applies a ruling that needs only the state: decide, penalty, add_judge.
    /// (A rewind needs the events before it: see `fold`.)
    pub fn apply_ruling(&self, seq: u64, actor: &str, ruling: &Ruling) -> Result<Table, Violation> {
        self.check_judge(actor)?;
        let view = self.view();
        ruling.check().map_err(|m| Violation::new(&view, "a ruling gives a reason and complete fields", m))?;
        let mut next = self.clone();
        match ruling {
            Ruling::Decide { decision, .. } => {
                if view.awaiting_ruling.is_none() {
                    return Err(Violation::new(
                        &view,
                        "decide answers a state that waits for a ruling",
                        "the game is not waiting for a ruling",
                    ));
                }
                next = self.apply(seq, actor, decision)?;
            }
            Ruling::Penalty { concerns, seat, infraction, penalty, fix, .. } => {
                if !self.header.is_seat(seat) {
                    return Err(Violation::new(&view, "a penalty is against a seat", format!("{seat} is not a seat")));
                }
                next.penalties.push(PenaltyRecord {
                    seq,
                    judge: actor.to_string(),
                    seat: seat.clone(),
                    concerns: concerns.seq,
                    infraction: infraction.clone(),
                    penalty: penalty.clone(),
                    fix: fix.clone(),
                });
            }
            Ruling::AddJudge { judge, .. } => {
                if self.header.is_seat(judge) || self.header.is_judge(judge) {
                    return Err(Violation::new(
                        &view,
                        "every actor is unique",
                        format!("{judge} is already a seat or judge"),
                    ));
                }
                next.header.judges.push(judge.clone());
                next.state.set_judges(&next.header.judges);
            }
            Ruling::Rewind { .. } => return Err(Violation::new(&view, "a rewind", "a rewind is applied by the fold")),
        }
        next.rulings.push(RulingRecord::new(seq, actor, ruling));
        Ok(next)
    }

    /// After a rewind: the combat as it was after an earlier event, with the
    /// judges, penalties and notes as they are now (a rewind does not undo
    /// the adjudication).
    pub fn rewound_to(&self, earlier: Table, seq: u64, judge: &str, rewind: &Ruling) -> Table {
        // The rulings since the target stand, except a decision: its effect
        // was in the combat the rewind takes back.
        let since: Vec<RulingRecord> = self
            .rulings
            .iter()
            .filter(|r| !earlier.rulings.iter().any(|e| e.seq == r.seq) && r.kind != "decide")
            .cloned()
            .collect();
        let mut t = earlier;
        t.rulings.extend(since);
        t.rulings.push(RulingRecord::new(seq, judge, rewind));
        t.header.judges = self.header.judges.clone();
        t.state.set_judges(&t.header.judges);
        t.penalties = self.penalties.clone();
        t.notes = self.notes.clone();
        t
    }

    /// The state as a replay compares it from event to event, as JSON:
    /// `{"state", "judges", "penalties", "notes"}`, growing histories
    /// summarised (a count and the last), so each step costs the same
    /// however long the game. Replay finds what changed without writing it
    /// (see the `delta::Changes` below); this is what those changes are
    /// checked against.
    pub fn live_json(&self) -> serde_json::Value {
        #[derive(Serialize)]
        struct Live<'a> {
            state: serde_json::Value,
            judges: &'a [String],
            penalties: &'a [PenaltyRecord],
            notes: &'a [NoteRecord],
        }
        serde_json::to_value(Live {
            state: self.state.live_json(),
            judges: &self.header.judges,
            penalties: &self.penalties,
            notes: &self.notes,
        })
        .expect("a state serialises")
    }

    /// The order of priority in the window now open, by seat id (empty when
    /// no window is open, or the ruleset does not keep one). Where the text
    /// says "other players" without an order, it is the header's seat order.
    pub fn priority(&self) -> Vec<String> {
        self.state.priority()
    }

    /// The board, in the players' names. Every ruleset has one; the Option
    /// stays so that a ruleset can be added before its board.
    pub fn board(&self) -> Option<Board> {
        board_of(&self.state, &self.header)
    }

    /// What the ruleset recorded in words for the event at `seq`, beyond the
    /// action itself (Riftbound: the scores it made, among them a final point
    /// drawn as a card instead); `log` and `replay` show it under the event.
    pub fn said(&self, seq: u64) -> Vec<String> {
        self.state.said(&self.header, seq)
    }

    /// The step the game is at: `view().step`, without the rest of the
    /// view where the ruleset can say it alone (Doomtrooper).
    pub fn step(&self) -> StepRef {
        self.state.step()
    }

    /// What each seat and judge may record now, the next event being
    /// `next_seq`: the ruleset's moves, then the adjudication's (rulings
    /// and notes). See [`crate::kernel::moves`].
    pub fn moves(&self, next_seq: u64) -> Vec<Move> {
        let mut moves = self.combat_moves();
        crate::adjudication::moves(&self.header, self.view().awaiting_ruling.is_some(), next_seq, &mut moves);
        moves
    }

    /// The ruleset's moves alone: what may be recorded of the combat, the
    /// moves of every type but `ruling` and `note`.
    pub fn combat_moves(&self) -> Vec<Move> {
        self.state.moves(&self.header)
    }

    pub fn view(&self) -> View {
        self.state.view()
    }
}

/// What replay compares of a state (what [`Table::live_json`] writes),
/// borrowed from a table ([`Table::compared`]) or from replay's copy of the
/// state before ([`Kept`]): the header and the rulings, which replay does not
/// compare, are left out.
#[derive(Debug, Clone, Copy)]
pub struct Compared<'a> {
    judges: &'a [String],
    notes: &'a [NoteRecord],
    penalties: &'a [PenaltyRecord],
    state: &'a RulesetState,
}

/// Replay's copy of what it compares of the state before the next event,
/// brought up to each state in turn by copying only what changed
/// ([`CatchUp`]): a Doomtrooper state member by member, another ruleset's
/// whole. Copying every state whole, handing it to the thread that compared
/// it and freeing it there was most of what replay did beyond verify
/// (callgrind). For comparing only: what serde does not
/// write may be stale in it (see [`CatchUp`]).
#[derive(Debug)]
pub struct Kept {
    judges: Vec<String>,
    notes: Vec<NoteRecord>,
    penalties: Vec<PenaltyRecord>,
    /// Shared (`Kept::whole`) where it is a whole copy, to draw a board from.
    state: Arc<RulesetState>,
}

impl Kept {
    /// A copy of what replay compares of `table`.
    pub fn of(table: &Table) -> Kept {
        Kept {
            judges: table.header.judges.clone(),
            notes: table.notes.clone(),
            penalties: table.penalties.clone(),
            state: Arc::new(table.state.clone()),
        }
    }

    /// The state, shared, where this copy of it is whole: every ruleset's
    /// but Doomtrooper's, which is caught up member by member and may be
    /// stale in what serde does not write (a board may read it). Replay
    /// draws such a ruleset's board at every event: from this copy, not
    /// from a second one.
    pub fn whole(&self) -> Option<Arc<RulesetState>> {
        match self.state.caught_up_in_place() {
            true => None,
            false => Some(self.state.clone()),
        }
    }

    pub fn compared(&self) -> Compared<'_> {
        Compared { judges: &self.judges, notes: &self.notes, penalties: &self.penalties, state: &self.state }
    }

    /// Brings this copy up to `table`: what differs is copied, the rest
    /// kept. Returns what differed, to be compared where it is shown
    /// ([`Found::changes`]: what [`Differ::changes`] finds between this
    /// copy's `compared` and `table`'s).
    pub fn catch_up(&mut self, table: &Table) -> Found {
        self.catch_up_into(table, Found::with_capacity(16))
    }

    /// [`Kept::catch_up`], handing what differed to `found` (a
    /// `Found::names_only` where the values are not asked for).
    pub fn catch_up_into(&mut self, table: &Table, mut found: Found) -> Found {
        // As `Compared` compares them: the lists written whole.
        found.member("judges", &mut self.judges, &table.header.judges, |d, a, b| d.written(a, b));
        found.member("notes", &mut self.notes, &table.notes, |d, a, b| d.written(a, b));
        found.member("penalties", &mut self.penalties, &table.penalties, |d, a, b| d.written(a, b));
        found.under("state", |found| match self.state.caught_up_in_place() {
            // Never shared (`Kept::whole`): caught up in place.
            true => Arc::make_mut(&mut self.state).catch_up(&table.state, found),
            // A new copy, not written over the old: a board drawn from the
            // old one may still hold it.
            false => {
                let now = Arc::new(table.state.clone());
                found.differed(&mut self.state, &now, |d, a, b| a.changes_into(b, d));
            }
        });
        found
    }
}

impl Table {
    /// A refusal in the seats' names, for the people who read it: each
    /// seat id in its message as "Alice (p1)" (one already so named is
    /// left as it is), and who may act by name (`may_act` keeps the ids).
    /// The reducers know the seats by id only; the header names them.
    pub fn named(&self, mut v: Violation) -> Violation {
        v.message = name_seats(&self.header, &v.message);
        v.may_act_names = v.may_act.iter().map(|id| self.header.name_of(id)).collect();
        v
    }
}

/// `text` with each seat id that stands as a word of its own (not inside
/// a longer word, not already in "Name (id)") replaced by "Name (id)".
fn name_seats(header: &Header, text: &str) -> String {
    let is_id_char = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    while let Some(start) = rest.find(is_id_char) {
        let end = rest[start..].find(|c: char| !is_id_char(c)).map_or(rest.len(), |e| start + e);
        let word = &rest[start..end];
        out.push_str(&rest[..start]);
        let named_already = rest[..start].ends_with('(') && rest[end..].starts_with(')');
        match header.is_seat(word) && !named_already {
            true => out.push_str(&header.name_of(word)),
            false => out.push_str(word),
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// The board of `state`, in the names `header` gives the seats.
pub fn board_of(state: &RulesetState, header: &Header) -> Option<Board> {
    Some(state.board(header))
}

impl Table {
    /// What replay compares of this state.
    pub fn compared(&self) -> Compared<'_> {
        Compared { judges: &self.header.judges, notes: &self.notes, penalties: &self.penalties, state: &self.state }
    }

    /// Whether the board of this state, the state a copy of the one before
    /// was caught up to (`found`: what differed, as paths in
    /// [`Table::live_json`]), is the board before: the ruleset names the
    /// members its board does not show, and every member that differed is
    /// under one of them. Replay builds the board again only
    /// otherwise (most events of a Doomtrooper combat pass priority on and
    /// show nothing new on the board); a debug build checks each board kept
    /// against one built. A ruleset that names none has its board built at
    /// every event: its board may read what the live JSON summarises (a
    /// whole pile, where the JSON has its count and last card).
    pub fn board_unchanged_by(&self, found: &Found) -> bool {
        let unseen = self.state.unseen_on_board();
        !unseen.is_empty() && found.all_under(unseen)
    }
}

/// What changed from one state to another, as `delta::diff` finds it
/// between their [`Table::live_json`], member by member: judges, notes,
/// penalties, then the ruleset's state.
impl Changes for Compared<'_> {
    fn changes_into(&self, after: &Self, differ: &mut Differ) {
        if self.judges != after.judges {
            differ.under("judges", |d| d.written(self.judges, after.judges));
        }
        if self.notes != after.notes {
            differ.under("notes", |d| d.written(self.notes, after.notes));
        }
        if self.penalties != after.penalties {
            differ.under("penalties", |d| d.written(self.penalties, after.penalties));
        }
        differ.under("state", |differ| self.state.changes_into(after.state, differ));
    }
}

/// An action in plain words: its type, then its fields, e.g.
/// `counter Smoke Bomb -> seq 12` or `announce combat defending_player=p2 attacker=...`.
///
/// Only the fields the kernel defines as event references are shown as
/// "seq N": a `counter`'s `target` (the kernel's counter names the seq of the
/// effect it nullifies) and a ruling's or note's `concerns`. Any other field
/// named `target` is the ruleset's own (a GURPS roll's target is a skill
/// number) and is shown as a plain field.
pub fn describe(action: &Value) -> String {
    use std::fmt::Write;
    let Some(map) = action.as_object() else {
        return action.to_string();
    };
    let kind = map.get("type").and_then(Value::as_str).unwrap_or("?");
    // The words written one after another into one string: replay puts
    // every event in words, and a list of words joined was a sixth of its
    // showing thread's work (callgrind).
    let mut words = String::with_capacity(64);
    words.push_str(kind);
    for tag in ["what", "effect", "kind"] {
        if let Some(Value::String(s)) = map.get(tag) {
            words.push(' ');
            words.push_str(s);
        }
    }
    if let Some(Value::String(card)) = map.get("card") {
        let _ = write!(words, " \"{card}\"");
    }
    let mut shown = vec!["type", "what", "effect", "kind", "card"];
    if kind == ActionType::Counter.name()
        && let Some(target) = map.get("target").and_then(Value::as_u64)
    {
        let _ = write!(words, " -> seq {target}");
        shown.push("target");
    }
    if let Some(seq) = map.get("concerns").and_then(|c| c.get("seq")).and_then(Value::as_u64) {
        let _ = write!(words, " about seq {seq}");
        shown.push("concerns");
    }
    for (k, v) in map {
        if !shown.contains(&k.as_str()) {
            let _ = write!(words, " {k}={}", in_words(v));
        }
    }
    words
}

/// Keys that name what an entry is about: said first, without their key.
const NAME_KEYS: &[&str] = &["warrior", "unit", "combatant", "creature", "name", "attacker", "card", "player", "id"];

/// A payload value as a judge reads it, not as JSON: lists joined with
/// commas, an entry as "Max Steiner: rating 7", nothing as "none".
fn in_words(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "none".into(),
        Value::Array(items) if items.is_empty() => "none".into(),
        Value::Array(items) => items.iter().map(in_words).collect::<Vec<_>>().join(", "),
        Value::Object(map) => {
            let name = NAME_KEYS.iter().find_map(|k| map.get(*k).and_then(Value::as_str).map(|n| (*k, n)));
            let rest: Vec<String> = map
                .iter()
                .filter(|(k, _)| name.is_none_or(|(n, _)| n != k.as_str()))
                .map(|(k, v)| match v {
                    // A nested list reads better in brackets than run into the entry.
                    Value::Array(_) => format!("{k} [{}]", in_words(v)),
                    _ => format!("{k} {}", in_words(v)),
                })
                .collect();
            match name {
                Some((_, n)) if rest.is_empty() => n.to_string(),
                Some((_, n)) => format!("{n}: {}", rest.join(" ")),
                None => format!("({})", rest.join(", ")),
            }
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::describe;
    use serde_json::json;

    #[test]
    fn only_a_counters_target_and_a_rulings_concerns_are_event_references() {
        assert_eq!(
            describe(&json!({"type": "counter", "card": "Cancel", "target": 12})),
            "counter \"Cancel\" -> seq 12"
        );
        let roll = describe(&json!({"type": "resolve", "what": "roll", "by": "Ann", "target": 15, "roll": 9}));
        assert!(!roll.contains("seq"), "a GURPS roll's target is a skill number: {roll}");
        assert!(roll.contains("target=15"), "{roll}");
        let h = "0".repeat(64);
        let note = describe(&json!({"type": "note", "concerns": {"seq": 4, "hash": h}, "text": "slow play"}));
        assert_eq!(note, "note about seq 4 text=slow play");
    }

    #[test]
    fn payloads_read_as_words_not_json() {
        let status = describe(&json!({"type": "resolve", "what": "status",
            "status": [{"outcome": "unharmed", "warrior": "Max Steiner"}, {"outcome": "killed", "warrior": "Legionnaire"}]}));
        assert_eq!(status, "resolve status status=Max Steiner: outcome unharmed, Legionnaire: outcome killed");
        let warzone = describe(&json!({"type": "announce", "what": "warzone", "warzone": null}));
        assert_eq!(warzone, "announce warzone warzone=none");
        let counted = describe(&json!({"type": "resolve", "what": "results", "counted": [50, 52], "results": []}));
        assert_eq!(counted, "resolve results counted=50, 52 results=none");
    }
}
