//! Structured differences between two JSON values (states), as paths with
//! the value on each side: what replay shows per event and diff shows
//! between two records. Outcome fields sort first, so a judge reads who was
//! wounded or killed, control and points before the rest.

use std::borrow::Cow;
use std::cell::Cell;
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

/// One difference: the value at `path` on each side (None: absent).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Change {
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<Value>,
}

/// What a field's name says of a change under it: the result a table
/// plays for (who won, the points, scores and control), the rest of a
/// combat's outcome (what happened to each warrior or card, and
/// penalties), or neither. (Containers such as a list of finished combats
/// are not outcome words: every field of a finished combat lies under
/// them.) A `match`, not lists searched: replay ranks every change of
/// every event (callgrind, 5,000 events: 9.2M instructions in `rank`
/// against 10.7M with the lists).
fn word_rank(field: &[u8]) -> Option<u8> {
    match field {
        b"winner" | b"points" | b"scores" | b"influence_lost" | b"controller" | b"control" | b"award" => Some(0),
        b"results" | b"status" | b"outcome" | b"dead" | b"trash" | b"discard" | b"penalties" => Some(1),
        _ => None,
    }
}

/// Whether a field holds the seq of an event: wholly (an effect's seq,
/// what a counter names, where a part of a breakdown began, the cards a
/// question is about), or as the first element of a pair that the event
/// made (`"battle_tactic": [2, "Fight"]`). Two records of one combat number
/// their events differently from the first extra or missing event on, so
/// these differ without the combat differing.
pub(crate) fn holds_seq(name: &[u8], index: Option<&[u8]>) -> bool {
    match name {
        b"seq" | b"target" | b"counters" | b"scope" | b"sub_scope" | b"ended_by" | b"concerns" | b"counted"
        | b"cards" => true,
        b"battle_tactic" | b"warzone" | b"award" => index == Some(b"0]"),
        _ => false,
    }
}

/// Every leaf that differs between `a` and `b`, the result first, then the
/// rest of the outcome, then everything else.
pub fn diff(a: &Value, b: &Value) -> Vec<Change> {
    let mut out = Vec::new();
    walk("", a, b, &mut out);
    out.sort_by_cached_key(|c| rank(&c.path));
    out
}

/// [`diff`] of two values written as [`Doc`]s: the same changes in the same
/// order, without building either side as a `Value`. Subtrees whose bytes
/// are equal are skipped unread, and only the leaves that differ are
/// parsed. Object members are matched by key, so the two texts may list
/// them in any order (a struct's fields in declaration order).
pub fn diff_docs(a: &Doc, b: &Doc) -> Vec<Change> {
    let mut out = Vec::new();
    walk("", Text::whole(a), Text::whole(b), &mut out);
    out.sort_by_cached_key(|c| rank(&c.path));
    out
}

/// What changed from one value to another of the same type: the changes
/// [`diff`] finds between their JSON, in the same order, found by comparing
/// the values themselves. A part equal on both sides (most of a state, from
/// one event to the next) is passed over without being written; a part
/// that differs is written on both sides and walked as [`diff_docs`] walks
/// it. This is what replay does per event (writing each state whole as
/// text and walking it was most of replay's cost).
pub trait Changes {
    /// Adds to `differ` what changed from `self` to `after`, under the path
    /// `differ` is at ([`Differ::under`]).
    fn changes_into(&self, after: &Self, differ: &mut Differ);
}

/// An `Option` serde writes as `null` when None: two values compared by
/// their own [`Changes`]; `null` on one side only, a change of the whole
/// value (a combat begun or ended).
impl<T: Changes + Serialize> Changes for Option<T> {
    fn changes_into(&self, after: &Self, differ: &mut Differ) {
        match (self, after) {
            (Some(a), Some(b)) => a.changes_into(b, differ),
            (None, None) => {}
            _ => differ.whole(self, after),
        }
    }
}

/// A copy of a value brought up to a later one of the same type by copying
/// only the members that differ: what replay keeps of the state before each
/// event. Copying the whole state at every event, and freeing the copy,
/// was most of what replay did that verify does not. Only what [`Changes`] compares is brought up to date: a member
/// serde does not write (a combat's place in its step table) may be stale,
/// so such a copy is for comparing, never for folding on.
///
/// Each member that differed is handed to a [`Found`] with its value
/// before and after, so that what changed is worked out ([`Found::changes`])
/// on another thread than the one that keeps the copy: replay's folding
/// thread keeps it, and comparing there was a third of that thread's work
/// while the thread that shows the events waited (callgrind, perf).
pub trait CatchUp {
    /// Makes what [`Changes`] compares of `self` equal to `after`'s, and
    /// hands each member that differed to `found`, at the path `found` is
    /// at ([`Found::under`]).
    fn catch_up(&mut self, after: &Self, found: &mut Found);
}

/// An `Option` caught up by its value's own [`CatchUp`] where both sides
/// have one; otherwise (a combat begun or ended) the whole value is a
/// change, as [`Changes`] finds it for an `Option`.
impl<T: CatchUp + Changes + Serialize + Clone + Send + 'static> CatchUp for Option<T> {
    fn catch_up(&mut self, after: &Self, found: &mut Found) {
        match (self.as_mut(), after) {
            (Some(a), Some(b)) => a.catch_up(b, found),
            (None, None) => {}
            _ => found.differed(self, after, |d, a, b| a.changes_into(b, d)),
        }
    }
}

/// A shared value is caught up by sharing it: the same `Arc` after, unread.
impl<T: Changes + Send + Sync + 'static> CatchUp for Arc<T> {
    fn catch_up(&mut self, after: &Self, found: &mut Found) {
        if !Arc::ptr_eq(self, after) {
            found.differed(self, after, |d, a, b| a.changes_into(b, d));
        }
    }
}

/// What [`CatchUp`] found differed, to be compared on another thread:
/// each member that differed, where it lies (the names on the way down, as
/// [`Differ::under`] takes them) and its value before and after, with what
/// compares them ([`Changes`], or the [`Differ`] method its kind names).
/// [`Found::changes`] gives exactly what [`Differ::changes`] gives for the
/// two states the copy was caught up from and to.
///
/// A `Found` made by [`Found::names_only`] keeps only where each member
/// that differed lies, not its values: enough to say whether a board must
/// be drawn again ([`Found::all_under`]), which is all a replay in the
/// board's words asks. Its [`Found::changes`] is not to be called.
#[derive(Default)]
pub struct Found {
    steps: Vec<FoundStep>,
    /// Only where the members that differed lie (`Found::names_only`).
    names_only: bool,
}

enum FoundStep {
    /// Into the member of this name.
    Enter(&'static str),
    /// Back out of the member entered last.
    Leave,
    /// A member that differed (the one entered last; named here when it
    /// was not entered first): its two values, compared when called (none
    /// kept by a `Found::names_only`).
    Differed(Option<&'static str>, Option<Compare>),
}

/// A member's two values, compared when called (`FoundStep::Differed`).
type Compare = Box<dyn Fn(&mut Differ) + Send>;

impl Found {
    /// Runs `f` at the member `name` of where this is, then comes back
    /// (nothing is kept of a member where nothing differed).
    pub fn under(&mut self, name: &'static str, f: impl FnOnce(&mut Found)) {
        let entered = self.steps.len();
        self.steps.push(FoundStep::Enter(name));
        f(self);
        match self.steps.len() == entered + 1 {
            true => self.steps.truncate(entered),
            false => self.steps.push(FoundStep::Leave),
        }
    }

    /// The member `name` of where this is, caught up: where it differs, it
    /// is copied from `after` (the value before kept here), and `compare`
    /// will find its changes.
    pub fn member<T: PartialEq + Clone + Send + 'static>(
        &mut self,
        name: &'static str,
        kept: &mut T,
        after: &T,
        compare: impl Fn(&mut Differ, &T, &T) + Send + 'static,
    ) {
        if kept != after {
            self.copied(Some(name), kept, after, compare);
        }
    }

    /// Where this is, a value that differs (its caller knows it does):
    /// copied from `after`, the value before kept here for `compare`.
    pub fn differed<T: Clone + Send + 'static>(
        &mut self,
        kept: &mut T,
        after: &T,
        compare: impl Fn(&mut Differ, &T, &T) + Send + 'static,
    ) {
        self.copied(None, kept, after, compare);
    }

    /// `kept` copied from `after`, and the two values kept for `compare`
    /// (where they are asked for).
    fn copied<T: Clone + Send + 'static>(
        &mut self,
        name: Option<&'static str>,
        kept: &mut T,
        after: &T,
        compare: impl Fn(&mut Differ, &T, &T) + Send + 'static,
    ) {
        if self.names_only {
            // Copied over (its buffers reused), and no value kept: copying
            // each member twice more and comparing them was about a fifth
            // of a replay's work (callgrind), for paths a replay in words
            // does not show.
            kept.clone_from(after);
            self.steps.push(FoundStep::Differed(name, None));
            return;
        }
        let (before, after) = (std::mem::replace(kept, after.clone()), after.clone());
        self.steps.push(FoundStep::Differed(name, Some(Box::new(move |d| compare(d, &before, &after)))));
    }

    /// Room for `steps` members entered, left and found differing, so
    /// that the list of an event's is allocated once.
    pub fn with_capacity(steps: usize) -> Found {
        Found { steps: Vec::with_capacity(steps), names_only: false }
    }

    /// As [`Found::with_capacity`], keeping only where each member that
    /// differed lies, not its values (see [`Found`]).
    pub fn names_only(steps: usize) -> Found {
        Found { steps: Vec::with_capacity(steps), names_only: true }
    }

    /// Whether every member that differed lies under one of `members`
    /// (paths as [`Differ`] writes them: `state.combat.window`), so every
    /// change found in them does: what [`crate::rules::Table`] asks to
    /// keep a board as it was.
    pub fn all_under(&self, members: &[&str]) -> bool {
        // The path where this is, in one buffer, checked as each member is
        // entered: a member entered is left only once something in it
        // differed, so one that leads to none of `members` answers no, and
        // one of `members` is passed over whole. (Paths written out for
        // every member found were a tenth of the folding thread's work.)
        let is_member = |path: &str| members.contains(&path);
        let leads_to_member =
            |path: &str| members.iter().any(|m| m.strip_prefix(path).is_some_and(|rest| rest.starts_with('.')));
        // `name` added to the path; the length to cut it back to.
        let enter = |path: &mut String, name: &str| {
            let len = path.len();
            if len > 0 {
                path.push('.');
            }
            path.push_str(name);
            len
        };
        let mut path = String::with_capacity(64);
        let mut lens = Vec::with_capacity(8);
        let mut steps = self.steps.iter();
        while let Some(step) = steps.next() {
            match step {
                FoundStep::Enter(name) => {
                    lens.push(enter(&mut path, name));
                    if is_member(&path) {
                        // Everything in it is under it: on to its Leave.
                        let mut depth = 0;
                        for step in steps.by_ref() {
                            match step {
                                FoundStep::Enter(_) => depth += 1,
                                FoundStep::Leave if depth == 0 => break,
                                FoundStep::Leave => depth -= 1,
                                FoundStep::Differed(..) => {}
                            }
                        }
                        path.truncate(lens.pop().expect("entered"));
                    } else if !leads_to_member(&path) {
                        return false;
                    }
                }
                FoundStep::Leave => path.truncate(lens.pop().expect("a member entered is left")),
                // Where this is leads to a member and is none.
                FoundStep::Differed(None, _) => return false,
                // Where this is leads to a member (or is the top): a member
                // named here is under one only if it is one.
                FoundStep::Differed(Some(name), _) => {
                    let len = enter(&mut path, name);
                    let under = is_member(&path);
                    path.truncate(len);
                    if !under {
                        return false;
                    }
                }
            }
        }
        true
    }

    /// What changed, in the order [`Differ::changes`] gives it. Not for a
    /// `Found::names_only` (it panics where a member differed).
    pub fn changes(&self, differ: &mut Differ) -> Vec<Change> {
        differ.gather(|differ| Found::run(&mut self.steps.iter(), differ))
    }

    /// The steps up to the `Leave` of the member entered last (or the end).
    fn run<'a>(steps: &mut impl Iterator<Item = &'a FoundStep>, differ: &mut Differ) {
        while let Some(step) = steps.next() {
            match step {
                FoundStep::Enter(name) => differ.under(name, |d| Found::run(steps, d)),
                FoundStep::Leave => return,
                FoundStep::Differed(name, compare) => {
                    let compare = compare.as_ref().expect("a Found that kept only names is not compared");
                    match name {
                        Some(name) => differ.under(name, |d| compare(d)),
                        None => compare(differ),
                    }
                }
            }
        }
    }
}

/// Where [`Changes`] gather, with the path they are at and the two text
/// buffers that values written whole reuse.
///
/// The path is one buffer, a member's name pushed on entering it and cut
/// off on leaving ([`Differ::under`]), and the rank of a change found at a
/// member (outcome first, as [`rank`] says) is known from the names on the
/// way down (the changes a member written whole is walked for are ranked
/// by their paths, which may hold any key): a path built anew for every
/// member entered, and each change's path split again to rank it, were a
/// sixth of a replay's comparing (callgrind).
#[derive(Default)]
pub struct Differ {
    changes: Vec<Change>,
    /// The rank of each change, as [`rank`] gives it.
    ranks: Vec<u8>,
    /// Where the changes found now are.
    path: String,
    /// The least [`word_rank`] of the member names in `path` (2: none).
    rank: u8,
    before: Doc,
    after: Doc,
}

impl Differ {
    /// Every change from `before` to `after` (outcome first, as [`diff`]
    /// orders them); the buffers stay for the next.
    pub fn changes<T: Changes + ?Sized>(&mut self, before: &T, after: &T) -> Vec<Change> {
        self.gather(|differ| before.changes_into(after, differ))
    }

    /// The changes `find` adds, ordered as [`Differ::changes`] orders them.
    fn gather(&mut self, find: impl FnOnce(&mut Differ)) -> Vec<Change> {
        debug_assert!(self.path.is_empty() && self.changes.is_empty());
        self.rank = 2;
        find(self);
        debug_assert_eq!(self.ranks.len(), self.changes.len());
        debug_assert!(self.changes.iter().zip(&self.ranks).all(|(c, r)| rank(&c.path) == *r));
        let changes = std::mem::take(&mut self.changes);
        // By rank, and in the order found within one (as `diff`'s stable sort).
        if self.ranks.is_sorted() {
            self.ranks.clear();
            return changes;
        }
        let mut out = Vec::with_capacity(changes.len());
        let mut by_rank: [Vec<Change>; 3] = Default::default();
        for (change, rank) in changes.into_iter().zip(self.ranks.drain(..)) {
            match rank {
                0 => out.push(change),
                r => by_rank[r as usize].push(change),
            }
        }
        out.append(&mut by_rank[1]);
        out.append(&mut by_rank[2]);
        out
    }

    /// Runs `f` at the member `name` of where this is (the path as the walk
    /// writes it: `a.b`), then comes back. `name` is one member's name, as a
    /// field is named: no `.` or `[` (the rank is read from it whole).
    pub fn under(&mut self, name: &str, f: impl FnOnce(&mut Differ)) {
        debug_assert!(!name.contains(['.', '[']), "{name} is not one member's name");
        let (len, rank) = (self.path.len(), self.rank);
        if !self.path.is_empty() {
            self.path.push('.');
        }
        self.path.push_str(name);
        self.rank = self.rank.min(word_rank(name.as_bytes()).unwrap_or(2));
        f(self);
        self.path.truncate(len);
        self.rank = rank;
    }

    /// Runs `f` at the element `i` of the list where this is (`a[3]`), then
    /// comes back. An index is not a name: it ranks nothing.
    fn at_index(&mut self, i: usize, f: impl FnOnce(&mut Differ)) {
        let len = self.path.len();
        self.path.push('[');
        self.path.push_str(itoa(i, &mut [0; 20]));
        self.path.push(']');
        f(self);
        self.path.truncate(len);
    }

    /// A change found here.
    fn push(&mut self, before: Option<Value>, after: Option<Value>) {
        let rank = if is_renumbering_path(&self.path) { 2 } else { self.rank };
        self.changes.push(Change { path: self.path.clone(), before, after });
        self.ranks.push(rank);
    }

    /// `before` and `after`, written as JSON text and walked: the changes
    /// of a value compared whole, here.
    pub fn written<T: Serialize + ?Sized>(&mut self, before: &T, after: &T) {
        self.before.write(before).expect("a state serialises");
        self.after.write(after).expect("a state serialises");
        let found = self.changes.len();
        walk(&self.path, Text::whole(&self.before), Text::whole(&self.after), &mut self.changes);
        // The walk's paths go below this one, through keys of any kind: ranked whole.
        self.ranks.extend(self.changes[found..].iter().map(|c| rank(&c.path)));
    }

    /// A value whose two sides the walk would not look into (`null` and an
    /// object, say): one change of the whole value, each side built as a
    /// `Value` directly. Writing both as text and parsing the object back
    /// was a twentieth of a replay's work (callgrind), all of it at the
    /// events that begin or end a combat.
    pub fn whole<T: Serialize>(&mut self, before: &T, after: &T) {
        let (before, after) = (value_of(before), value_of(after));
        debug_assert!(
            !(before.is_object() && after.is_object() || before.is_array() && after.is_array()),
            "{}: the walk would look into two objects or two arrays",
            self.path
        );
        self.unless_equal(before, after);
    }

    /// Two leaves that differ (numbers, strings): their values, unwritten.
    pub fn leaf<T: Serialize>(&mut self, before: &T, after: &T) {
        let (before, after) = (value_of(before), value_of(after));
        debug_assert!(
            !before.is_object() && !before.is_array() && !after.is_object() && !after.is_array(),
            "{} is not a leaf",
            self.path
        );
        self.unless_equal(before, after);
    }

    /// The change of the value here from `before` to `after`, unless they are equal.
    fn unless_equal(&mut self, before: Value, after: Value) {
        if before != after {
            self.push(Some(before), Some(after));
        }
    }

    /// A list, element by element as the walk takes an array: an element
    /// equal on both sides is passed over, one that differs is written on
    /// both sides and walked, one on one side only is a change of the
    /// whole element.
    pub fn list<T: Serialize + PartialEq>(&mut self, before: &[T], after: &[T]) {
        self.elements(before, after, Differ::written);
    }

    /// A list of leaves (strings, numbers), element by element as
    /// [`Differ::list`] takes it, each element that differs on both sides
    /// taken as a [`Differ::leaf`]: the walk of two leaves finds that one
    /// change, and writing both as text to walk them was a tenth of
    /// replay's comparing (callgrind: a window's order is new at a quarter
    /// of a Doomtrooper game's events).
    pub fn leaves<T: Serialize + PartialEq>(&mut self, before: &[T], after: &[T]) {
        self.elements(before, after, Differ::leaf);
    }

    /// A list of values compared by their own [`Changes`], element by
    /// element as [`Differ::list`] takes it: an element that differs on
    /// both sides is compared member by member rather than written as text
    /// and walked (a ledger's effects: when a combat ends, replay compares
    /// it with the one that ended before, whose effects differ at every
    /// index, and writing each effect twice was most of that).
    pub fn nested_list<T: Changes + Serialize + PartialEq>(&mut self, before: &[T], after: &[T]) {
        self.elements(before, after, |d, a, b| a.changes_into(b, d));
    }

    /// Two lists element by element: `both` for an element that differs on
    /// both sides, a change of the whole element for one on one side only.
    fn elements<T: Serialize + PartialEq>(&mut self, before: &[T], after: &[T], both: fn(&mut Differ, &T, &T)) {
        for i in 0..before.len().max(after.len()) {
            let (a, b) = (before.get(i), after.get(i));
            if a == b {
                continue;
            }
            self.at_index(i, |d| match (a, b) {
                (Some(a), Some(b)) => both(d, a, b),
                _ => d.optional(&a, &b),
            });
        }
    }

    /// A map, key by key: an entry equal on both sides is passed over
    /// unwritten; one on one side only is a change of the whole entry; one
    /// that differs is built as a `Value` on each side and walked as
    /// [`diff`] walks it. The changes come in the walk's order, by the key
    /// as JSON writes it (`"11"` before `"2"`). Writing the whole map as text
    /// on both sides whenever one entry changed was a third of what replay
    /// compared of a Doomtrooper combat (callgrind: its announcements, the
    /// cards played, the equipment and the points are maps that grow by an
    /// entry at a time).
    pub fn map<K: MapKey, V: Serialize + PartialEq>(&mut self, before: &BTreeMap<K, V>, after: &BTreeMap<K, V>) {
        let mut differing: Vec<(String, Option<&V>, Option<&V>)> = Vec::new();
        for (k, u, v) in merged(before.iter(), after.iter()) {
            if u != v {
                differing.push((k.json_key(), u, v));
            }
        }
        // The walk takes an object's members in the order of their keys as text.
        if K::NUMBERED {
            differing.sort_by(|a, b| a.0.cmp(&b.0));
        }
        for (key, u, v) in differing {
            let len = self.path.len();
            self.path.push('.');
            self.path.push_str(&key);
            let found = self.changes.len();
            match (u, v) {
                (Some(u), Some(v)) => walk(&self.path, &value_of(u), &value_of(v), &mut self.changes),
                (u, v) => self.changes.push(Change {
                    path: self.path.clone(),
                    before: u.map(value_of),
                    after: v.map(value_of),
                }),
            }
            // A key may be any text: each change is ranked by its path whole, as the walk's are.
            self.ranks.extend(self.changes[found..].iter().map(|c| rank(&c.path)));
            self.path.truncate(len);
        }
    }

    /// A member serde leaves out when it is None (`skip_serializing_if`):
    /// present on one side only, it is a change of the whole member.
    pub fn optional<T: Serialize>(&mut self, before: &Option<T>, after: &Option<T>) {
        match (before, after) {
            (Some(a), Some(b)) => self.written(a, b),
            (None, None) => {}
            (a, b) => self.push(a.as_ref().map(value_of), b.as_ref().map(value_of)),
        }
    }
}

/// The key of a map as JSON writes it: a string as it is, a number in decimal.
pub trait MapKey: Ord {
    /// Whether the keys are numbers, whose order as numbers is not their
    /// order as text.
    const NUMBERED: bool;
    fn json_key(&self) -> String;
}

impl MapKey for String {
    const NUMBERED: bool = false;
    fn json_key(&self) -> String {
        self.clone()
    }
}

impl MapKey for u64 {
    const NUMBERED: bool = true;
    fn json_key(&self) -> String {
        itoa(*self as usize, &mut [0; 20]).to_owned()
    }
}

/// A part of a state as a `Value` (a state always serialises).
fn value_of<T: Serialize>(v: &T) -> Value {
    serde_json::to_value(v).expect("a state serialises")
}

/// Implements [`Changes`] for a struct by its members, listed in key order
/// (the order the walk takes them; a debug build checks it):
/// - `name`: compared, and written whole when it differs;
/// - `name: optional`: an `Option` serde leaves out when None;
/// - `name: nested`: compared by its own [`Changes`];
/// - `name: optional_nested`: both;
/// - `name: leaf`: a number or a string, its two values taken unwritten;
/// - `name: list`: a `Vec`, element by element ([`Differ::list`]);
/// - `name: leaves`: a list of numbers or strings ([`Differ::leaves`]);
/// - `name: nested_list`: a list of values with their own [`Changes`] ([`Differ::nested_list`]);
/// - `name: map`: a `BTreeMap` (or one shared in an `Arc`), key by key ([`Differ::map`]).
///
/// Every member serde writes must be listed: the tests compare each
/// ruleset's changes with [`diff`] over its JSON, state by state.
///
/// `kept Type { ... }` implements [`CatchUp`] from the same list too (a
/// member `nested` or `optional_nested` caught up by its own, any other
/// copied where it differs): one list, so that what is compared and what
/// is kept up to date cannot drift apart.
#[macro_export]
macro_rules! changes_by_member {
    (kept $ty:ty { $($name:ident $(: $kind:ident)?),* $(,)? }) => {
        $crate::changes_by_member!($ty { $($name $(: $kind)?),* });
        impl $crate::delta::CatchUp for $ty {
            fn catch_up(&mut self, after: &Self, found: &mut $crate::delta::Found) {
                $( $crate::changes_by_member!(@catch_up self, after, found, $name $($kind)?); )*
            }
        }
    };
    (@catch_up $a:ident, $b:ident, $found:ident, $name:ident nested) => {
        $found.under(stringify!($name), |f| $crate::delta::CatchUp::catch_up(&mut $a.$name, &$b.$name, f));
    };
    // Both sides present: caught up by its own; otherwise as `optional`.
    (@catch_up $a:ident, $b:ident, $found:ident, $name:ident optional_nested) => {
        match (&mut $a.$name, &$b.$name) {
            (Some(x), Some(y)) => $found.under(stringify!($name), |f| $crate::delta::CatchUp::catch_up(x, y, f)),
            _ => $crate::changes_by_member!(@catch_up $a, $b, $found, $name optional),
        }
    };
    (@catch_up $a:ident, $b:ident, $found:ident, $name:ident) => {
        $crate::changes_by_member!(@catch_up $a, $b, $found, $name written)
    };
    // Copied where it differs, compared as `@member` compares it.
    (@catch_up $a:ident, $b:ident, $found:ident, $name:ident $method:ident) => {
        $found.member(stringify!($name), &mut $a.$name, &$b.$name, |d, x, y| d.$method(x, y))
    };
    ($ty:ty { $($name:ident $(: $kind:ident)?),* $(,)? }) => {
        impl $crate::delta::Changes for $ty {
            fn changes_into(&self, after: &Self, differ: &mut $crate::delta::Differ) {
                #[cfg(debug_assertions)]
                {
                    let names: &[&str] = &[$(stringify!($name)),*];
                    debug_assert!(names.is_sorted(), "{} lists its members out of key order: {names:?}", stringify!($ty));
                }
                $( $crate::changes_by_member!(@member self, after, differ, $name $($kind)?); )*
            }
        }
    };
    // A plain member is written whole when it differs.
    (@member $a:ident, $b:ident, $differ:ident, $name:ident) => {
        $crate::changes_by_member!(@member $a, $b, $differ, $name written)
    };
    (@member $a:ident, $b:ident, $differ:ident, $name:ident optional_nested) => {
        match (&$a.$name, &$b.$name) {
            (Some(x), Some(y)) => $differ.under(stringify!($name), |d| $crate::delta::Changes::changes_into(x, y, d)),
            _ => $crate::changes_by_member!(@member $a, $b, $differ, $name optional),
        }
    };
    (@member $a:ident, $b:ident, $differ:ident, $name:ident nested) => {
        $differ.under(stringify!($name), |d| $crate::delta::Changes::changes_into(&$a.$name, &$b.$name, d));
    };
    // `leaf`, `list`, `leaves`, `nested_list`, `map`, `optional` (and `written`): the `Differ` method of that name.
    (@member $a:ident, $b:ident, $differ:ident, $name:ident $method:ident) => {
        if $a.$name != $b.$name {
            $differ.under(stringify!($name), |d| d.$method(&$a.$name, &$b.$name));
        }
    };
}

/// A value shared between states: the same `Arc` is the same value, unread.
impl<T: Changes> Changes for Arc<T> {
    fn changes_into(&self, after: &Self, differ: &mut Differ) {
        if !Arc::ptr_eq(self, after) {
            (**self).changes_into(after, differ)
        }
    }
}

/// A value as compact JSON text (serde_json's), and where each of its
/// objects and arrays ends: marked while it is written, so a walk steps over
/// a subtree without reading it.
#[derive(Debug, Default)]
pub struct Doc {
    text: Vec<u8>,
    /// At the index of each opening `{` or `[`: the index just past its
    /// closing one (0 elsewhere).
    ends: Vec<u32>,
}

impl Doc {
    pub fn of(value: &impl Serialize) -> serde_json::Result<Doc> {
        let mut doc = Doc::default();
        doc.write(value)?;
        Ok(doc)
    }

    /// Writes `value` over this doc (its buffers are reused).
    pub fn write<T: Serialize + ?Sized>(&mut self, value: &T) -> serde_json::Result<()> {
        self.text.clear();
        // `ends` is not cleared (a memset per write): the walk reads it only
        // at the brackets of this text, each marked again as it is written.
        let len = Cell::new(0);
        let out = Counted { text: &mut self.text, len: &len };
        let marks = Marks { len: &len, ends: &mut self.ends, open: Vec::new() };
        value.serialize(&mut serde_json::Serializer::with_formatter(out, marks))
    }

    /// Where the object or array opening at `start` ends (just past it).
    fn end_of(&self, start: usize) -> usize {
        self.ends[start] as usize
    }

    /// The JSON text.
    pub fn as_bytes(&self) -> &[u8] {
        &self.text
    }
}

/// A writer that keeps its length where [`Marks`] reads it.
struct Counted<'a> {
    text: &'a mut Vec<u8>,
    len: &'a Cell<usize>,
}

impl std::io::Write for Counted<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.text.extend_from_slice(buf);
        self.len.set(self.text.len());
        Ok(buf.len())
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.write(buf).map(drop)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// serde_json's compact formatter, marking where each object and array
/// ends. (Strings are not marked: most are keys and short, and a walk reads
/// only the keys of the objects it looks inside. Marking them all cost
/// more in writing than it saved the walk.)
struct Marks<'a> {
    len: &'a Cell<usize>,
    ends: &'a mut Vec<u32>,
    /// Where the objects and arrays still open begin.
    open: Vec<usize>,
}

impl Marks<'_> {
    fn open<W: ?Sized + std::io::Write>(&mut self, w: &mut W, bracket: &[u8]) -> std::io::Result<()> {
        self.open.push(self.len.get());
        w.write_all(bracket)
    }

    fn close<W: ?Sized + std::io::Write>(&mut self, w: &mut W, bracket: &[u8]) -> std::io::Result<()> {
        w.write_all(bracket)?;
        let start = self.open.pop().expect("an open bracket");
        if self.ends.len() <= start {
            self.ends.resize((start + 1).max(2 * self.ends.len()), 0);
        }
        self.ends[start] = u32::try_from(self.len.get()).map_err(std::io::Error::other)?;
        Ok(())
    }
}

impl serde_json::ser::Formatter for Marks<'_> {
    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.open(w, b"[")
    }
    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.close(w, b"]")
    }
    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.open(w, b"{")
    }
    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.close(w, b"}")
    }
}

/// The path's field names, without array indexes, as bytes. (Split on
/// bytes: `str::split` on a set of chars decodes every char, and replay
/// ranks every change of every event; '.' and '[' are ASCII, so each part
/// is whole UTF-8.)
fn fields(path: &str) -> impl Iterator<Item = &[u8]> {
    path.as_bytes().split(|b| matches!(b, b'.' | b'[')).filter(|p| !p.ends_with(b"]"))
}

/// 0: the result (points, scores, control); 1: the rest of the outcome; 2: the rest.
pub fn rank(path: &str) -> u8 {
    if is_renumbering_path(path) {
        return 2;
    }
    let mut rank = 2;
    for field in fields(path) {
        match word_rank(field) {
            Some(0) => return 0,
            Some(r) => rank = r,
            None => {}
        }
    }
    rank
}

pub fn is_outcome(path: &str) -> bool {
    rank(path) < 2
}

/// A path that holds an event's seq.
fn is_renumbering_path(path: &str) -> bool {
    let path = path.as_bytes();
    let last = path.rsplit(|b| *b == b'.').next().unwrap_or(path);
    let (name, index) = match last.iter().position(|b| *b == b'[') {
        Some(i) => (&last[..i], Some(&last[i + 1..])),
        None => (last, None),
    };
    holds_seq(name, index)
}

/// A difference only in which seq an event has: both sides are numbers at a
/// field that holds a seq. `diff` between two records counts these apart
/// rather than listing them as differences.
pub fn is_renumbering(c: &Change) -> bool {
    let number = |v: &Option<Value>| v.as_ref().is_some_and(Value::is_u64);
    number(&c.before) && number(&c.after) && is_renumbering_path(&c.path)
}

/// A JSON value as the walk reads it: a `Value`, or the text of one.
trait Tree<'a>: Copy {
    /// The members of an object, in key order; the elements of an array.
    fn shape(self) -> Shape<'a, Self>;
    /// Equal as JSON values. May say false for two equal values: the walk
    /// then looks inside, and finds no leaf that differs.
    fn same(self, other: Self) -> bool;
    fn value(self) -> Value;
    /// When both are objects with the same keys in the same order (two
    /// states of one type, the common case): the members whose values
    /// differ, in key order (only they are kept and sorted, where the
    /// merge sorts every member). None otherwise: the walk then merges the
    /// two by key.
    fn differing_members(self, _other: Self) -> Option<Vec<(Cow<'a, str>, Self, Self)>> {
        None
    }
}

enum Shape<'a, T> {
    Object(Vec<(Cow<'a, str>, T)>),
    Array(Vec<T>),
    Leaf,
}

impl<'a> Tree<'a> for &'a Value {
    fn shape(self) -> Shape<'a, Self> {
        match self {
            // serde_json's map iterates in key order (`preserve_order` off).
            Value::Object(m) => Shape::Object(m.iter().map(|(k, v)| (Cow::Borrowed(k.as_str()), v)).collect()),
            Value::Array(a) => Shape::Array(a.iter().collect()),
            _ => Shape::Leaf,
        }
    }

    fn same(self, other: Self) -> bool {
        self == other
    }

    fn value(self) -> Value {
        self.clone()
    }
}

/// One value in a [`Doc`]: the bytes `start..end` of its text.
#[derive(Clone, Copy)]
struct Text<'a> {
    doc: &'a Doc,
    start: usize,
    end: usize,
}

impl<'a> Text<'a> {
    fn whole(doc: &'a Doc) -> Text<'a> {
        Text { doc, start: 0, end: doc.text.len() }
    }

    fn bytes(self) -> &'a [u8] {
        &self.doc.text[self.start..self.end]
    }

    /// The value that starts at `start` (compact text: no spaces).
    fn at(doc: &'a Doc, start: usize) -> Text<'a> {
        let text = &doc.text;
        let end = match text[start] {
            b'{' | b'[' => doc.end_of(start),
            b'"' => {
                let mut i = start + 1;
                loop {
                    i += memchr::memchr2(b'"', b'\\', &text[i..]).expect("a string is closed");
                    match text[i] {
                        b'"' => break i + 1,
                        _ => i += 2,
                    }
                }
            }
            // A number, true, false or null.
            _ => {
                start + text[start..].iter().position(|c| matches!(c, b',' | b'}' | b']')).unwrap_or(text.len() - start)
            }
        };
        Text { doc, start, end }
    }
}

impl<'a> Tree<'a> for Text<'a> {
    fn shape(self) -> Shape<'a, Self> {
        let b = &self.doc.text;
        match b.get(self.start) {
            Some(b'{') => {
                let mut members = Vec::new();
                let mut i = self.start + 1;
                while b[i] != b'}' {
                    let key = Text::at(self.doc, i);
                    let name = &b[key.start + 1..key.end - 1];
                    let name = match (name.contains(&b'\\'), std::str::from_utf8(name)) {
                        (false, Ok(k)) => Cow::Borrowed(k),
                        _ => Cow::Owned(serde_json::from_slice(key.bytes()).expect("a JSON key")),
                    };
                    // Past the key and its colon.
                    let value = Text::at(self.doc, key.end + 1);
                    members.push((name, value));
                    i = if b[value.end] == b',' { value.end + 1 } else { value.end };
                }
                // Stable: were a key given twice, its members would stay in
                // text order.
                members.sort_by(|x, y| x.0.cmp(&y.0));
                Shape::Object(members)
            }
            Some(b'[') => {
                let mut elements = Vec::new();
                let mut i = self.start + 1;
                while b[i] != b']' {
                    let element = Text::at(self.doc, i);
                    elements.push(element);
                    i = if b[element.end] == b',' { element.end + 1 } else { element.end };
                }
                Shape::Array(elements)
            }
            _ => Shape::Leaf,
        }
    }

    /// Equal bytes are equal values. Different bytes are mostly different
    /// values, but not always (`-0.0` and `0.0`, members in another order):
    /// the walk then looks inside and compares the leaves as values.
    fn same(self, other: Self) -> bool {
        self.bytes() == other.bytes()
    }

    /// Strings without escapes, whole numbers and literals are read
    /// directly (each changed leaf of every event is read: serde_json's
    /// parser costs several times as much for one); anything else is parsed.
    /// The text is serde_json's own, so these read as its parser reads them.
    fn value(self) -> Value {
        let b = self.bytes();
        match b {
            [b'"', inner @ .., b'"'] if !inner.contains(&b'\\') => {
                Value::String(std::str::from_utf8(inner).expect("serde_json writes UTF-8").to_owned())
            }
            b"true" => Value::Bool(true),
            b"false" => Value::Bool(false),
            b"null" => Value::Null,
            [b'1'..=b'9', ..] | [b'0'] if b.iter().all(u8::is_ascii_digit) => {
                match std::str::from_utf8(b).ok().and_then(|n| n.parse::<u64>().ok()) {
                    Some(n) => Value::from(n),
                    None => serde_json::from_slice(b).expect("JSON text"),
                }
            }
            _ => serde_json::from_slice(b).expect("JSON text"),
        }
    }

    fn differing_members(self, other: Self) -> Option<Vec<(Cow<'a, str>, Self, Self)>> {
        let (a, b) = (&self.doc.text, &other.doc.text);
        if a.get(self.start) != Some(&b'{') || b.get(other.start) != Some(&b'{') {
            return None;
        }
        let (mut i, mut j) = (self.start + 1, other.start + 1);
        let mut differing = Vec::new();
        loop {
            match (a[i], b[j]) {
                (b'}', b'}') => break,
                (b'}', _) | (_, b'}') => return None,
                _ => {}
            }
            let (key, other_key) = (Text::at(self.doc, i), Text::at(other.doc, j));
            if key.bytes() != other_key.bytes() {
                return None;
            }
            // Past each key and its colon.
            let (u, v) = (Text::at(self.doc, key.end + 1), Text::at(other.doc, other_key.end + 1));
            if !u.same(v) {
                let name = &key.bytes()[1..key.bytes().len() - 1];
                if name.contains(&b'\\') {
                    return None;
                }
                differing.push((Cow::Borrowed(std::str::from_utf8(name).ok()?), u, v));
            }
            i = if a[u.end] == b',' { u.end + 1 } else { u.end };
            j = if b[v.end] == b',' { v.end + 1 } else { v.end };
        }
        differing.sort_by(|x, y| x.0.cmp(&y.0));
        Some(differing)
    }
}

/// `i` in decimal, written into `buf`.
fn itoa(mut i: usize, buf: &mut [u8; 20]) -> &str {
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (i % 10) as u8;
        i /= 10;
        if i == 0 {
            break;
        }
    }
    std::str::from_utf8(&buf[at..]).expect("ASCII digits")
}

/// The one walk behind [`diff`] and [`diff_docs`]: every leaf that differs,
/// by path, in key order within an object and index order within an array.
fn walk<'a, T: Tree<'a>>(path: &str, a: T, b: T, out: &mut Vec<Change>) {
    // Paths are built by hand: `format!` costs several times as much.
    let join = |k: &str| {
        let mut p = String::with_capacity(path.len() + 1 + k.len());
        p.push_str(path);
        if !path.is_empty() {
            p.push('.');
        }
        p.push_str(k);
        p
    };
    let index = |i: usize| {
        let mut p = String::with_capacity(path.len() + 6);
        p.push_str(path);
        p.push('[');
        p.push_str(itoa(i, &mut [0; 20]));
        p.push(']');
        p
    };
    if let Some(differing) = a.differing_members(b) {
        for (k, u, v) in differing {
            walk(&join(&k), u, v, out);
        }
        return;
    }
    match (a.shape(), b.shape()) {
        (Shape::Object(x), Shape::Object(y)) => {
            // Both lists are in key order: merge them.
            for (k, u, v) in merged(x, y) {
                match (u, v) {
                    // Most of a state is the same from one event to the
                    // next: an equal subtree is skipped before its path is
                    // built.
                    (Some(u), Some(v)) if u.same(v) => {}
                    (Some(u), Some(v)) => walk(&join(&k), u, v, out),
                    (u, v) => {
                        out.push(Change { path: join(&k), before: u.map(|u| u.value()), after: v.map(|v| v.value()) })
                    }
                }
            }
        }
        (Shape::Array(x), Shape::Array(y)) => {
            for i in 0..x.len().max(y.len()) {
                match (x.get(i), y.get(i)) {
                    (Some(u), Some(v)) if u.same(*v) => {}
                    (Some(u), Some(v)) => walk(&index(i), *u, *v, out),
                    (u, v) => {
                        out.push(Change { path: index(i), before: u.map(|u| u.value()), after: v.map(|v| v.value()) })
                    }
                }
            }
        }
        _ => {
            let (before, after) = (a.value(), b.value());
            if before != after {
                out.push(Change { path: path.to_string(), before: Some(before), after: Some(after) });
            }
        }
    }
}

/// Two lists of (key, value), each in key order, merged: every key once,
/// with its value on each side (None: absent there).
fn merged<K: Ord, U, V>(
    x: impl IntoIterator<Item = (K, U)>,
    y: impl IntoIterator<Item = (K, V)>,
) -> impl Iterator<Item = (K, Option<U>, Option<V>)> {
    let (mut x, mut y) = (x.into_iter().peekable(), y.into_iter().peekable());
    std::iter::from_fn(move || {
        let order = match (x.peek(), y.peek()) {
            (None, None) => return None,
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (Some((k, _)), Some((l, _))) => k.cmp(l),
        };
        Some(match order {
            Ordering::Less => x.next().map(|(k, u)| (k, Some(u), None)).expect("peeked"),
            Ordering::Greater => y.next().map(|(k, v)| (k, None, Some(v))).expect("peeked"),
            Ordering::Equal => {
                let ((k, u), (_, v)) = (x.next().expect("peeked"), y.next().expect("peeked"));
                (k, Some(u), Some(v))
            }
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn found_members_are_under_the_members_named_or_not() {
        let leaf = |d: &mut Differ, a: &u64, b: &u64| d.leaf(a, b);
        let found = |f: &dyn Fn(&mut Found)| {
            let mut found = Found::default();
            f(&mut found);
            found
        };
        let members = ["state.combat.window", "state.combat.step"];
        // Inside a member named, a member named, nothing at all: under.
        let inside = found(&|f| {
            f.under("state", |f| {
                f.under("combat", |f| {
                    f.under("window", |f| f.member("passes", &mut 1, &2, leaf));
                    f.member("step", &mut 1, &2, leaf);
                })
            })
        });
        assert!(inside.all_under(&members));
        assert!(Found::default().all_under(&members));
        // A member beside them, above them, or off their way: not under.
        let beside = found(&|f| f.under("state", |f| f.under("combat", |f| f.member("number", &mut 1, &2, leaf))));
        let above = found(&|f| f.under("state", |f| f.differed(&mut 1, &2, leaf)));
        let off = found(&|f| f.under("judges", |f| f.member("count", &mut 1, &2, leaf)));
        let after = found(&|f| {
            f.under("state", |f| f.under("combat", |f| f.member("step", &mut 1, &2, leaf)));
            f.member("notes", &mut 1, &2, leaf);
        });
        for (what, found) in [("beside", beside), ("above", above), ("off", off), ("after", after)] {
            assert!(!found.all_under(&members), "{what}");
        }
        // Nothing is kept of a member where nothing differed.
        assert!(found(&|f| f.under("state", |f| f.member("n", &mut 1, &1, leaf))).steps.is_empty());
    }

    #[test]
    fn a_found_of_names_only_catches_up_and_places_members_as_one_with_values() {
        let leaf = |d: &mut Differ, a: &u64, b: &u64| d.leaf(a, b);
        let members = ["state.combat.window"];
        for names_only in [false, true] {
            let mut found = match names_only {
                true => Found::names_only(4),
                false => Found::with_capacity(4),
            };
            let (mut window, mut number, mut step) = (1u64, 7u64, 3u64);
            found.under("state", |f| {
                f.under("combat", |f| {
                    f.member("window", &mut window, &2, leaf);
                    f.member("number", &mut number, &7, leaf);
                })
            });
            assert_eq!((window, number), (2, 7), "names only {names_only}: the copy is caught up");
            assert!(found.all_under(&members), "names only {names_only}");
            found.under("state", |f| f.under("combat", |f| f.member("step", &mut step, &4, leaf)));
            assert_eq!(step, 4);
            assert!(!found.all_under(&members), "names only {names_only}: step is not under window");
            if !names_only {
                let paths: Vec<String> = found.changes(&mut Differ::default()).into_iter().map(|c| c.path).collect();
                assert_eq!(paths, ["state.combat.window", "state.combat.step"]);
            }
        }
    }

    #[test]
    #[should_panic(expected = "kept only names")]
    fn a_found_of_names_only_is_not_compared() {
        let mut found = Found::names_only(1);
        found.member("n", &mut 1u64, &2, |d: &mut Differ, a: &u64, b: &u64| d.leaf(a, b));
        found.changes(&mut Differ::default());
    }

    #[test]
    fn paths_of_changed_leaves_with_outcomes_first() {
        let a = json!({"step": "3-6", "points": {"p1": 0}, "effects": [1, 2]});
        let b = json!({"step": "7", "points": {"p1": 2}, "effects": [1, 2, 3]});
        let d = diff(&a, &b);
        assert_eq!(d[0], Change { path: "points.p1".into(), before: Some(json!(0)), after: Some(json!(2)) });
        assert!(d.contains(&Change { path: "effects[2]".into(), before: None, after: Some(json!(3)) }));
        assert!(d.contains(&Change { path: "step".into(), before: Some(json!("3-6")), after: Some(json!("7")) }));
        assert!(diff(&a, &a).is_empty());
    }

    #[test]
    fn the_result_comes_before_the_rest_of_the_outcome_and_seqs_are_renumbering() {
        let a = json!({"finished": [{"effects": [{"seq": 4}], "results": ["wounded"], "battle_tactic": [2, "Fight"]}], "points": {"p1": 1}});
        let b = json!({"finished": [{"effects": [{"seq": 5}], "results": ["unharmed"], "battle_tactic": [3, "Fight"]}], "points": {"p1": 0}});
        let d = diff(&a, &b);
        assert_eq!(d[0].path, "points.p1");
        assert_eq!(d[1].path, "finished[0].results[0]");
        let renumbered: Vec<&str> = d.iter().filter(|c| is_renumbering(c)).map(|c| c.path.as_str()).collect();
        assert_eq!(renumbered, vec!["finished[0].battle_tactic[0]", "finished[0].effects[0].seq"]);
    }

    /// A list compared as leaves finds what the walk over the two lists'
    /// JSON finds, whichever side is longer, empty, or shares a prefix.
    #[test]
    fn a_list_of_leaves_changes_as_its_json_diffs() {
        #[derive(Serialize)]
        struct Listed {
            order: Vec<String>,
            counts: Vec<u64>,
        }
        crate::changes_by_member!(Listed { counts: leaves, order: leaves });
        let listed = |order: &[&str], counts: &[u64]| Listed {
            order: order.iter().map(|s| s.to_string()).collect(),
            counts: counts.to_vec(),
        };
        let sides = [
            listed(&[], &[]),
            listed(&["p1"], &[0]),
            listed(&["p1", "p2"], &[0, 4]),
            listed(&["p2", "p1"], &[4, 0]),
            listed(&["p1", "p2", "p3"], &[0, 4, 5]),
            listed(&["p3"], &[5, 0, 4]),
        ];
        let mut differ = Differ::default();
        for a in &sides {
            for b in &sides {
                let by_json = diff(&serde_json::to_value(a).unwrap(), &serde_json::to_value(b).unwrap());
                assert_eq!(differ.changes(a, b), by_json);
            }
        }
    }

    /// The leaves the walk reads directly read as serde_json's parser reads them.
    #[test]
    fn leaves_read_directly_are_the_values_parsed() {
        let leaves =
            json!(["plain", "é \"quoted\" \\ \n", "", 0, 7, 18446744073709551615u64, -3, 2.5, 1e3, true, false, null]);
        let doc = Doc::of(&leaves).unwrap();
        let Shape::Array(elements) = Text::whole(&doc).shape() else { panic!("an array") };
        assert_eq!(elements.len(), 12);
        for (element, want) in elements.iter().zip(leaves.as_array().unwrap()) {
            assert_eq!(&element.value(), want, "{}", String::from_utf8_lossy(element.bytes()));
            assert_eq!(element.value(), serde_json::from_slice::<Value>(element.bytes()).unwrap());
        }
    }

    /// A struct writes its fields in declaration order, not key order: the
    /// walk over its text matches members by key and lists changes as the
    /// walk over its `Value` does.
    #[test]
    fn a_doc_in_declaration_order_diffs_as_its_value() {
        #[derive(Serialize)]
        struct Side {
            zeta: Vec<u64>,
            alpha: Option<String>,
            #[serde(rename = "mid\"dle")]
            middle: std::collections::BTreeMap<u64, (bool, i64)>,
        }
        let a = Side { zeta: vec![1, 2], alpha: None, middle: [(3, (true, -1)), (10, (false, 2))].into() };
        let b = Side { zeta: vec![1], alpha: Some("é\n".into()), middle: [(3, (true, -2)), (4, (false, 2))].into() };
        let by_value = diff(&serde_json::to_value(&a).unwrap(), &serde_json::to_value(&b).unwrap());
        assert_eq!(by_value.len(), 5, "{by_value:?}");
        assert_eq!(diff_docs(&Doc::of(&a).unwrap(), &Doc::of(&b).unwrap()), by_value);
        assert_eq!(Doc::of(&a).unwrap().as_bytes(), serde_json::to_vec(&a).unwrap());
        assert!(diff_docs(&Doc::of(&a).unwrap(), &Doc::of(&a).unwrap()).is_empty());
    }
}
