//! Moves: what a seat or judge may record now, with its choices.
//!
//! A [`Move`] is one thing an actor may append at this point of the game:
//! the action with every field the rules fix already filled in (and the
//! answers the reducer computes, such as WTactics' `dead`), the fields to
//! pick from a closed list ([`Choice`]), and the fields the table types
//! ([`Entry`]: a card's name, a rating, a die roll, with the bounds the text
//! gives). Each ruleset generates its moves from its state; the adjudication
//! adds the judges' (rulings) and everyone's notes.
//!
//! Two properties tie the moves to the reducer (`tests/moves.rs` checks both
//! on every ruleset):
//! - **sound**: an action made from a move ([`Move::build`]) by picking
//!   allowed options and entering values within bounds is accepted, unless
//!   a typed value breaks a rule that depends on it, and then the refusal
//!   names it;
//! - **complete**: every action the reducer accepts is admitted by some move
//!   ([`Move::admits`]).
//!
//! A field is named by its path in the action: keys (and list indices)
//! joined by `/`, e.g. `target`, `ratings/0/rating`, `decision/first`.
//! Everything here is pure.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::event::{ActionType, check_name};

/// One thing a seat or judge may record now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Move {
    /// Who may make it: a seat id, or a judge's name.
    pub seat: String,
    /// The action type.
    #[serde(rename = "type")]
    pub kind: ActionType,
    /// The move in words, e.g. "counter" or "announce battle tactic".
    pub label: String,
    /// The action with every field the rules fix already filled in,
    /// `type` included. The fields in `choose` and `enter` are absent here.
    pub action: Value,
    /// Fields to pick from a closed list.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub choose: Vec<Choice>,
    /// Fields the table types.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub enter: Vec<Entry>,
}

/// A field picked from a closed list of options.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Choice {
    /// The field's path in the action (keys joined by `/`).
    pub field: String,
    pub options: Vec<Pick>,
    /// How many options to pick: with `list`, the field is a list of
    /// `min..=max` distinct options; without it, one option (`min` 0: the
    /// field may be left out).
    pub min: u32,
    pub max: u32,
    /// The field holds a list of the options picked, in the order picked.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub list: bool,
}

/// One option of a [`Choice`] (or a suggestion of an [`Entry`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Pick {
    pub value: Value,
    /// The option in words, e.g. "Shield of Faith (seq 51) by Bob (p2)".
    pub label: String,
}

/// A field the table types.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// The field's path in the action (keys joined by `/`); in a list's
    /// `items`, relative to the item, and empty for the item itself.
    pub field: String,
    pub kind: EntryKind,
    /// What to enter, in words, e.g. "Max Steiner's rating".
    pub label: String,
    /// Bounds: of the value for a number, of the seq for an event, of the
    /// count for a list. None where the text gives none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<i64>,
    /// The field may be left out.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub optional: bool,
    /// Values the table will often mean (names already on the board); not
    /// a closed list: anything of the kind may be typed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suggest: Vec<Pick>,
    /// For a list: the fields of each item.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub items: Vec<Entry>,
    /// For a list: the fields of each item picked from a closed list (a
    /// flag such as a unit's `tank`, or a unit on the board), relative to
    /// the item.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub choose: Vec<Choice>,
}

/// What kind of value an [`Entry`] takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    /// A card's name.
    Card,
    /// A name the table gives: a warrior, creature, unit, character, judge.
    Name,
    /// Free text: a reason, a note, an infraction.
    Text,
    /// A rating (a whole number).
    Rating,
    /// A die roll or a sum of dice (a whole number).
    Roll,
    /// Points, damage, influence, cost (a whole number).
    Points,
    /// Any other whole number.
    Number,
    /// An earlier event, as `{"seq", "hash"}`; `min`/`max` bound the seq.
    Event,
    /// A list of items, each with the fields in `items`; `min`/`max` bound its length.
    List,
}

impl EntryKind {
    pub fn is_number(self) -> bool {
        matches!(self, EntryKind::Rating | EntryKind::Roll | EntryKind::Points | EntryKind::Number)
    }
}

impl Choice {
    /// One option out of `options`.
    pub fn one(field: &str, options: Vec<Pick>) -> Choice {
        Choice { field: field.into(), options, min: 1, max: 1, list: false }
    }

    /// A list of `min..=max` distinct options.
    pub fn some(field: &str, options: Vec<Pick>, min: u32, max: u32) -> Choice {
        Choice { field: field.into(), options, min, max, list: true }
    }
}

impl Pick {
    pub fn new(value: impl Into<Value>, label: impl Into<String>) -> Pick {
        Pick { value: value.into(), label: label.into() }
    }
}

impl Entry {
    /// A field of `kind`, without bounds.
    pub fn new(field: &str, kind: EntryKind, label: impl Into<String>) -> Entry {
        Entry {
            field: field.into(),
            kind,
            label: label.into(),
            min: None,
            max: None,
            optional: false,
            suggest: vec![],
            items: vec![],
            choose: vec![],
        }
    }

    /// A whole number within `min..=max` (either may be open).
    pub fn number(field: &str, kind: EntryKind, label: impl Into<String>, min: Option<i64>, max: Option<i64>) -> Entry {
        Entry { min, max, ..Entry::new(field, kind, label) }
    }

    /// A list of `min..=max` items (either may be open), each with `items`' fields.
    pub fn list(field: &str, label: impl Into<String>, min: Option<i64>, max: Option<i64>, items: Vec<Entry>) -> Entry {
        Entry { min, max, items, ..Entry::new(field, EntryKind::List, label) }
    }

    pub fn optional(self) -> Entry {
        Entry { optional: true, ..self }
    }

    pub fn suggesting(self, suggest: Vec<Pick>) -> Entry {
        Entry { suggest, ..self }
    }

    /// For a list: a field of each item picked from a closed list.
    pub fn choosing(mut self, choice: Choice) -> Entry {
        self.choose.push(choice);
        self
    }

    /// Whether `value` is of this entry's kind and within its bounds; if
    /// not, why, naming the field.
    pub fn check(&self, value: &Value) -> Result<(), String> {
        let name = if self.label.is_empty() { self.field.as_str() } else { self.label.as_str() };
        let within = |n: i64, what: &str| -> Result<(), String> {
            if self.min.is_some_and(|m| n < m) || self.max.is_some_and(|m| n > m) {
                return Err(format!("{name}: {what} {n} is outside {}", bounds(self.min, self.max)));
            }
            Ok(())
        };
        match self.kind {
            EntryKind::Card | EntryKind::Name => match value.as_str() {
                Some(s) => check_name(name, s),
                None => Err(format!("{name}: expected text, got {value}")),
            },
            // Free text is the reducer's to check (a reason must not be
            // empty, a rule cited may be anything): here, only that it is text.
            EntryKind::Text => match value.is_string() {
                true => Ok(()),
                false => Err(format!("{name}: expected text, got {value}")),
            },
            k if k.is_number() => match value.as_i64() {
                Some(n) => within(n, "value"),
                None => Err(format!("{name}: expected a whole number, got {value}")),
            },
            EntryKind::Event => {
                let seq = value.get("seq").and_then(Value::as_u64);
                let hash = value.get("hash").and_then(Value::as_str);
                let shape = value.as_object().is_some_and(|o| o.len() == 2);
                match (seq, hash) {
                    (Some(seq), Some(h)) if shape && h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()) => {
                        within(i64::try_from(seq).unwrap_or(i64::MAX), "seq")
                    }
                    _ => Err(format!("{name}: expected an event as {{\"seq\": N, \"hash\": \"...\"}}, got {value}")),
                }
            }
            _ => {
                let Some(list) = value.as_array() else {
                    return Err(format!("{name}: expected a list, got {value}"));
                };
                within(list.len() as i64, "a list of")?;
                for item in list {
                    // As `Move::admits` reads a move: entries, then choices.
                    let mut rest = item.clone();
                    for e in &self.items {
                        match take(&mut rest, &e.field) {
                            Some(Value::Null) if e.optional => {}
                            Some(v) => e.check(&v)?,
                            None if e.optional => {}
                            None => return Err(format!("{name}: an item has no {}", e.field)),
                        }
                    }
                    for c in &self.choose {
                        match take(&mut rest, &c.field) {
                            Some(v) => check_choice(c, &v).map_err(|m| format!("{name}: {m}"))?,
                            None if c.min == 0 => {}
                            None => return Err(format!("{name}: an item has no {}", c.field)),
                        }
                    }
                    if !(rest.is_null() || only_empty_objects(&rest)) {
                        return Err(format!("{name}: an item has fields this move does not take: {rest}"));
                    }
                }
                Ok(())
            }
        }
    }
}

/// Whether what is left of a list item, its entries taken, is only the
/// objects that held them (an item's field may be nested, e.g.
/// `defender/name`: taking it leaves `{"defender": {}}`).
fn only_empty_objects(v: &Value) -> bool {
    v.as_object().is_some_and(|o| o.values().all(only_empty_objects))
}

/// `min..=max` in words.
pub fn bounds(min: Option<i64>, max: Option<i64>) -> String {
    match (min, max) {
        (Some(a), Some(b)) => format!("{a} to {b}"),
        (Some(a), None) => format!("{a} or more"),
        (None, Some(b)) => format!("at most {b}"),
        (None, None) => "any".into(),
    }
}

impl Move {
    /// A move of `kind` by `seat` whose action is `action` (an object with
    /// its `type`), with nothing to choose or enter yet.
    pub fn new(seat: &str, label: impl Into<String>, action: Value) -> Move {
        let kind = action.get("type").and_then(Value::as_str).and_then(ActionType::parse);
        debug_assert!(kind.is_some(), "a move's action has a known type: {action}");
        Move {
            seat: seat.to_string(),
            kind: kind.unwrap_or(ActionType::Note),
            label: label.into(),
            action,
            choose: vec![],
            enter: vec![],
        }
    }

    pub fn choosing(mut self, choice: Choice) -> Move {
        self.choose.push(choice);
        self
    }

    pub fn entering(mut self, entry: Entry) -> Move {
        self.enter.push(entry);
        self
    }

    /// The action made from this move with `values` (path, value) for its
    /// choices and entries. What is not given stays out of the action.
    pub fn build(&self, values: &[(String, Value)]) -> Value {
        let mut action = self.action.clone();
        for (path, value) in values {
            put(&mut action, path, value.clone());
        }
        action
    }

    /// Whether `action` is made from this move by picking allowed options
    /// and entering values of the right kind within bounds; if not, why.
    pub fn admits(&self, action: &Value) -> Result<(), String> {
        let mut rest = action.clone();
        let mut fixed = self.action.clone();
        // Entries first: a choice may pick an object whose other fields are
        // entered (a GURPS combatant's PC/NPC and seat, then its name), as
        // `build` puts the choice first and the entries into it.
        for e in &self.enter {
            take(&mut fixed, &e.field);
            match take(&mut rest, &e.field) {
                // An optional field written as null is left out (the payloads read it as None).
                Some(Value::Null) if e.optional => {}
                Some(v) => e.check(&v)?,
                None if e.optional => {}
                None => return Err(format!("{} is not entered", e.field)),
            }
        }
        for c in &self.choose {
            take(&mut fixed, &c.field);
            match take(&mut rest, &c.field) {
                Some(v) => check_choice(c, &v)?,
                None if c.min == 0 => {}
                None => return Err(format!("{} is not chosen", c.field)),
            }
        }
        if rest != fixed {
            return Err(match first_difference(&fixed, &rest, String::new()) {
                (path, Some(f), Some(r)) => format!("{path} is fixed at {f} by this move, not {r}"),
                (path, None, Some(r)) => format!("{path} is not a field of this move (given {r})"),
                (path, Some(f), None) => format!("{path} is fixed at {f} by this move and missing"),
                (path, None, None) => format!("{path} differs"),
            });
        }
        Ok(())
    }
}

/// The first place (a path, as fields are named) where the move's fixed
/// fields and the action's differ, with each side's value there.
fn first_difference<'a>(
    fixed: &'a Value,
    rest: &'a Value,
    path: String,
) -> (String, Option<&'a Value>, Option<&'a Value>) {
    let at = |key: &str| if path.is_empty() { key.to_string() } else { format!("{path}/{key}") };
    match (fixed, rest) {
        (Value::Object(f), Value::Object(r)) => {
            for (key, fv) in f {
                match r.get(key) {
                    Some(rv) if rv == fv => {}
                    Some(rv) => return first_difference(fv, rv, at(key)),
                    None => return (at(key), Some(fv), None),
                }
            }
            match r.iter().find(|(key, _)| !f.contains_key(*key)) {
                Some((key, rv)) => (at(key), None, Some(rv)),
                None => (path, Some(fixed), Some(rest)),
            }
        }
        (Value::Array(f), Value::Array(r)) if f.len() == r.len() => match f.iter().zip(r).position(|(a, b)| a != b) {
            Some(i) => first_difference(&f[i], &r[i], at(&i.to_string())),
            None => (path, Some(fixed), Some(rest)),
        },
        _ => (path, Some(fixed), Some(rest)),
    }
}

fn check_choice(c: &Choice, v: &Value) -> Result<(), String> {
    let allowed = |x: &Value| c.options.iter().any(|o| o.value == *x);
    let names = || c.options.iter().map(|o| o.label.as_str()).collect::<Vec<_>>().join(", ");
    if !c.list {
        if !allowed(v) {
            return Err(format!("{}: {v} is not one of the options ({})", c.field, names()));
        }
        return Ok(());
    }
    let Some(list) = v.as_array() else {
        return Err(format!("{}: expected a list, got {v}", c.field));
    };
    if list.len() < c.min as usize || list.len() > c.max as usize {
        return Err(format!("{}: pick {} to {}, not {}", c.field, c.min, c.max, list.len()));
    }
    for (i, x) in list.iter().enumerate() {
        if !allowed(x) {
            return Err(format!("{}: {x} is not one of the options ({})", c.field, names()));
        }
        if list[..i].contains(x) {
            return Err(format!("{}: {x} is picked twice", c.field));
        }
    }
    Ok(())
}

/// Removes the value at `path` (keys and indices joined by `/`; empty:
/// the whole value) and returns it. A list element is replaced by null, so
/// that the other indices still mean what they did.
pub fn take(value: &mut Value, path: &str) -> Option<Value> {
    if path.is_empty() {
        return Some(std::mem::take(value));
    }
    let (parent, last) = match path.rsplit_once('/') {
        Some((p, l)) => (at_mut(value, p)?, l),
        None => (value, path),
    };
    match parent {
        Value::Object(map) => map.remove(last),
        Value::Array(list) => last.parse::<usize>().ok().and_then(|i| list.get_mut(i)).map(std::mem::take),
        _ => None,
    }
}

fn at_mut<'a>(value: &'a mut Value, path: &str) -> Option<&'a mut Value> {
    path.split('/').try_fold(value, |v, key| match v {
        Value::Object(map) => map.get_mut(key),
        Value::Array(list) => key.parse::<usize>().ok().and_then(|i| list.get_mut(i)),
        _ => None,
    })
}

/// Sets the value at `path`, making the objects on the way; in a list, an
/// index names an element there or the next one (one past the end). A path
/// that names nothing of the kind (a word where a list is, an index past
/// the next) changes nothing: paths come from the moves, but a recorder may
/// read moves from a server, and a bad path must not grow a list without end.
pub fn put(value: &mut Value, path: &str, new: Value) {
    if path.is_empty() {
        *value = new;
        return;
    }
    let mut v = value;
    for key in path.split('/') {
        v = match v {
            Value::Array(list) => match key.parse::<usize>() {
                Ok(i) if i < list.len() => &mut list[i],
                Ok(i) if i == list.len() => {
                    list.push(Value::Null);
                    &mut list[i]
                }
                _ => return,
            },
            other => {
                if !other.is_object() {
                    *other = Value::Object(Map::new());
                }
                other.as_object_mut().expect("an object").entry(key).or_insert(Value::Null)
            }
        };
    }
    *v = new;
}

/// Whether a move is one of those always open to every seat or judge (a
/// note, a rewind, a penalty, a judge added), not a move of the combat.
pub fn always_open(m: &Move) -> bool {
    match m.kind {
        ActionType::Note => true,
        ActionType::Ruling => m.action.get("kind").and_then(Value::as_str) != Some("decide"),
        _ => false,
    }
}

/// The moves as a recorder lists them: the combat's first, in the order
/// the ruleset gives them, then those always open (notes, rulings).
pub fn menu(moves: &[Move]) -> Vec<&Move> {
    let (combat, always): (Vec<&Move>, Vec<&Move>) = moves.iter().partition(|m| !always_open(m));
    combat.into_iter().chain(always).collect()
}

/// One move in words: its label, then the options of its first choice
/// (at most six of them, else how many), e.g. "counter Combat Drugs (seq
/// 50) / Cancel (seq 52)".
pub fn move_words(m: &Move) -> String {
    match m.choose.first() {
        Some(c) if c.options.len() > 6 => format!("{} (one of {})", m.label, c.options.len()),
        Some(c) if !c.options.is_empty() => {
            let options: Vec<&str> = c.options.iter().map(|o| o.label.as_str()).collect();
            format!("{} {}", m.label, options.join(" / "))
        }
        _ => m.label.clone(),
    }
}

/// What `actor` may record now in words, one entry per move of the
/// combat (a refusal lists them: see `Violation::offered`).
pub fn offered_to(moves: &[Move], actor: &str) -> Vec<String> {
    runs(moves.iter().filter(|m| m.seat == actor && !always_open(m)).map(move_words).collect())
}

/// The moves of the combat in words, one line per actor, in the order the
/// moves come: "Bob (p2) may: pass · counter Combat Drugs (seq 50) · play
/// modify / end_combat / save". `name` gives an actor's name ("Bob (p2)").
/// The moves always open (notes, rulings) are left out, and a run of moves
/// whose words differ only in one number reads as one ("start combat with
/// 2 to 12 combatants").
pub fn in_words(moves: &[Move], name: impl Fn(&str) -> String) -> Vec<String> {
    let mut actors: Vec<&str> = vec![];
    for m in moves.iter().filter(|m| !always_open(m)) {
        if !actors.contains(&m.seat.as_str()) {
            actors.push(&m.seat);
        }
    }
    actors
        .into_iter()
        .map(|actor| {
            let words: Vec<String> =
                moves.iter().filter(|m| m.seat == actor && !always_open(m)).map(move_words).collect();
            format!("{} may: {}", name(actor), runs(words).join(" · "))
        })
        .collect()
}

/// Folds each run of three or more words that differ only in one whole
/// number, counting up by one, into "... N to M ...".
fn runs(words: Vec<String>) -> Vec<String> {
    // (text before the first number, the number, text after it)
    fn split(w: &str) -> Option<(&str, u64, &str)> {
        let start = w.find(|c: char| c.is_ascii_digit())?;
        let len = w[start..].find(|c: char| !c.is_ascii_digit()).unwrap_or(w.len() - start);
        Some((&w[..start], w[start..start + len].parse().ok()?, &w[start + len..]))
    }
    let mut out: Vec<String> = vec![];
    let mut i = 0;
    while i < words.len() {
        let mut j = i + 1;
        if let Some((before, first, after)) = split(&words[i]) {
            let nth = |k: usize| first.checked_add(k as u64);
            while j < words.len() && nth(j - i).is_some_and(|n| split(&words[j]) == Some((before, n, after))) {
                j += 1;
            }
            if j - i > 2 {
                out.push(format!("{before}{first} to {}{after}", first + (j - i - 1) as u64));
                i = j;
                continue;
            }
        }
        out.push(words[i].clone());
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn counter() -> Move {
        Move::new("p2", "counter", json!({"type": "counter"}))
            .choosing(Choice::one("target", vec![Pick::new(50, "Combat Drugs (seq 50)"), Pick::new(52, "x")]))
            .entering(Entry::new("card", EntryKind::Card, "the counter card"))
    }

    #[test]
    fn an_action_built_from_a_move_is_admitted_and_others_are_not() {
        let m = counter();
        let a = m.build(&[("target".into(), json!(50)), ("card".into(), json!("Cancel"))]);
        assert_eq!(a, json!({"type": "counter", "target": 50, "card": "Cancel"}));
        assert_eq!(m.admits(&a), Ok(()));
        assert!(m.admits(&json!({"type": "counter", "target": 51, "card": "Cancel"})).unwrap_err().contains("target"));
        assert!(m.admits(&json!({"type": "counter", "target": 50})).unwrap_err().contains("card"));
        assert!(m.admits(&json!({"type": "counter", "target": 50, "card": "C", "x": 1})).is_err());
        assert!(m.admits(&json!({"type": "play", "target": 50, "card": "C"})).is_err());
    }

    #[test]
    fn moves_in_words_fold_runs_of_numbers() {
        let words = |w: &[&str]| runs(w.iter().map(|s| s.to_string()).collect());
        let run = ["pass", "start with 2 combatants", "start with 3 combatants", "start with 4 combatants", "end"];
        assert_eq!(words(&run), ["pass", "start with 2 to 4 combatants", "end"]);
        assert_eq!(words(&["seq 1", "seq 2"]), ["seq 1", "seq 2"], "two are left as they are");
        assert_eq!(words(&["seq 5", "seq 3", "seq 4"]), ["seq 5", "seq 3", "seq 4"]);
    }

    #[test]
    fn a_list_item_may_have_nested_fields() {
        let item = vec![
            Entry::new("defender/name", EntryKind::Name, "the defender"),
            Entry::new("attacker", EntryKind::Name, "the attacker"),
        ];
        let m = Move::new("p2", "defend", json!({"type": "announce"})).entering(Entry::list(
            "blocks",
            "the defenders",
            Some(1),
            None,
            item,
        ));
        let a = json!({"type": "announce", "blocks": [{"defender": {"name": "Knight"}, "attacker": "Orc"}]});
        assert_eq!(m.admits(&a), Ok(()));
        let extra =
            json!({"type": "announce", "blocks": [{"defender": {"name": "Knight", "x": 1}, "attacker": "Orc"}]});
        assert!(m.admits(&extra).unwrap_err().contains("does not take"));
    }

    #[test]
    fn nested_paths_lists_and_bounds() {
        let m =
            Move::new("p1", "standing", json!({"type": "resolve", "ratings": [{"warrior": "A"}, {"warrior": "B"}]}))
                .entering(Entry::number("ratings/0/rating", EntryKind::Rating, "A's rating", Some(0), None))
                .entering(Entry::number("ratings/1/rating", EntryKind::Rating, "B's rating", Some(0), None))
                .entering(Entry::list(
                    "items",
                    "items",
                    Some(0),
                    Some(2),
                    vec![Entry::new("", EntryKind::Card, "item")],
                ))
                .choosing(Choice::some("units", vec![Pick::new("u1", "u1"), Pick::new("u2", "u2")], 1, 2));
        let a = m.build(&[
            ("ratings/0/rating".into(), json!(7)),
            ("ratings/1/rating".into(), json!(3)),
            ("items".into(), json!(["Bolter"])),
            ("units".into(), json!(["u2", "u1"])),
        ]);
        assert_eq!(a["ratings"], json!([{"warrior": "A", "rating": 7}, {"warrior": "B", "rating": 3}]));
        assert_eq!(m.admits(&a), Ok(()));
        let mut low = a.clone();
        low["ratings"][1]["rating"] = json!(-1);
        assert!(m.admits(&low).unwrap_err().contains("B's rating"));
        let mut renamed = a.clone();
        renamed["ratings"][1]["warrior"] = json!("C");
        assert!(m.admits(&renamed).is_err());
        let mut twice = a.clone();
        twice["units"] = json!(["u1", "u1"]);
        assert!(m.admits(&twice).unwrap_err().contains("twice"));
        let mut many = a;
        many["items"] = json!(["a", "b", "c"]);
        assert!(m.admits(&many).is_err());
    }

    #[test]
    fn a_list_item_may_have_picked_fields() {
        let flag = Choice { min: 0, ..Choice::one("tank", vec![Pick::new(true, "Tank"), Pick::new(false, "no Tank")]) };
        let units = Entry::list("units", "the units", Some(1), None, vec![Entry::new("name", EntryKind::Name, "unit")])
            .choosing(flag);
        let m = Move::new("p1", "move", json!({"type": "announce", "what": "move"})).entering(units);
        let a =
            json!({"type": "announce", "what": "move", "units": [{"name": "Golem", "tank": true}, {"name": "Imp"}]});
        assert_eq!(m.admits(&a), Ok(()));
        let bad = json!({"type": "announce", "what": "move", "units": [{"name": "Golem", "tank": 1}]});
        assert!(m.admits(&bad).unwrap_err().contains("tank"));
    }
}
