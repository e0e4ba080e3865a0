//! The append path: a game loaded at its head (`Recorder`), an action
//! checked against the moves offered and the rules, sealed, stored, made
//! durable and acknowledged, one at a time or as a batch; and `create`.

use chrono::Utc;
use serde::Serialize;
use serde_json::Value;

use super::{RecordError, StoredGame, Submission, broken, refused};
use crate::event::{Draft, Event, Header, Link, check_game_name, seal};
use crate::fold::{FoldError, Folder, Next, Source};
use crate::kernel::{View, Violation};
use crate::limits::{SNAPSHOT_EVERY, SNAPSHOT_SPARSE};
use crate::rules::Table;
use crate::store::{AppendError, Store, Ticket};

/// The result of an append.
#[derive(Debug, Clone, Serialize)]
pub struct Appended {
    pub event: Event,
    /// True when this was a retry of an append already stored (same actor
    /// and action at the expected seq): the stored event is returned.
    pub duplicate: bool,
    /// Where the game stands after this event (for a retry, at the head).
    pub view: View,
    /// `view.may_act` by name ("Alice (p1)"), for the acknowledgement a
    /// person reads (`view` keeps the ids).
    pub may_act_names: Vec<String>,
}

/// A game loaded for recording: its state at the head.
pub struct Recorder<'s> {
    source: StoredGame<'s>,
    folder: Folder,
    head: Link,
    /// A snapshot of the fold is kept after every stored event whose seq is
    /// a multiple of this (0: none).
    every: u64,
    /// Set when an append folded in place was not stored and the state at
    /// `head` could not be folded again from the store (see `refold`): the
    /// fold is then past the head, and nothing more is appended through
    /// this recorder.
    unfolded: Option<String>,
}

/// A game's stored events up to `next`, then a batch being sealed after
/// them: what the fold reads again when a rewind in the batch goes back to
/// an event before it, in the store or earlier in the batch.
struct Pending<'a, 's> {
    stored: &'a StoredGame<'s>,
    /// The seq of the batch's first event (the stored game ends before it).
    next: u64,
    batch: &'a [Event],
}

impl Source for Pending<'_, '_> {
    type Error = RecordError;
    fn events_from(&self, from: u64) -> Box<dyn Iterator<Item = Result<Event, RecordError>> + '_> {
        let batch = self.batch.iter().cloned().map(Ok);
        match self.next.checked_sub(from) {
            Some(stored) if stored > 0 => Box::new(self.stored.events_from(from).take(stored as usize).chain(batch)),
            _ => Box::new(batch.skip((from - self.next) as usize)),
        }
    }

    fn hash_of(&self, seq: u64) -> Result<Option<String>, RecordError> {
        match seq.checked_sub(self.next) {
            None => self.stored.hash_of(seq),
            Some(i) => Ok(self.batch.get(i as usize).map(|e| e.hash.clone())),
        }
    }

    fn snapshot(&self, seq: u64) -> Option<(Folder, Link)> {
        self.stored.snapshot(seq.min(self.next.checked_sub(1)?))
    }
}

/// `sub` drafted against the state `table` and sealed as the event after
/// `head`, stamped now: its canonical bytes beside it.
fn sealed_after(sub: &Submission, table: Option<&Table>, head: &Link) -> Result<(Event, Vec<u8>), RecordError> {
    let draft = sub.draft(table)?;
    seal(&draft, Some(head), Utc::now()).map_err(|e| RecordError::Input(e.to_string()))
}

/// Offer-first: an action is recorded only if a move offered to its actor
/// at this point ([`Table::moves`]) admits it (`Move::admits`: its choices
/// among the options, its entries of the right kind and within bounds).
/// Only then does the fold check the typed values against the rules that
/// depend on them and apply the effect. So what the table is offered and
/// what the record takes are one list, as a chess program's `is_legal` is
/// membership in its legal moves.
///
/// If no move admits the action, the refusal says why in the rules' own
/// words where the fold has them (it would refuse too), else names the
/// nearest move of the action's type and what it does not admit; either
/// way with what the actor may record instead (`Violation::offered`).
///
/// Only new actions are held to the moves. Events already stored were
/// taken when they were appended, and folding them again (load, verify,
/// replay, import) checks them against the rules alone: a record made by an
/// earlier arbiter whose moves admitted less stays readable.
fn offered_first<S: Source + ?Sized>(folder: &Folder, event: &Event, source: &S) -> Result<(), RecordError>
where
    S::Error: Into<RecordError>,
{
    let Some(table) = folder.table() else { return Ok(()) };
    // A ruling or a note is one of the adjudication's moves; any other
    // action one of the ruleset's, which are all a refusal lists.
    let moves = match event.action.get("type").and_then(Value::as_str) {
        Some("ruling" | "note") => table.moves(event.seq),
        _ => table.combat_moves(),
    };
    let mine: Vec<&crate::kernel::moves::Move> = moves.iter().filter(|m| m.seat == event.actor).collect();
    if mine.iter().any(|m| m.admits(&event.action).is_ok()) {
        return Ok(());
    }
    let offered = crate::kernel::moves::offered_to(&moves, &event.actor);
    let mut violation = match folder.next(event, source) {
        Err(FoldError::Illegal { violation, .. }) => violation,
        Err(FoldError::Source(e)) => return Err(e.into()),
        Ok(_) => Box::new(not_offered(table, event, &mine)),
    };
    violation.offered = offered;
    Err(RecordError::Refused(violation))
}

/// The refusal of an action the rules would take but no move offers: the
/// moves of its type (if any) and why the first does not admit it.
fn not_offered(table: &Table, event: &Event, mine: &[&crate::kernel::moves::Move]) -> Violation {
    let kind = event.action.get("type").and_then(Value::as_str).unwrap_or_default();
    let who = table.header.name_of(&event.actor);
    // The nearest move: of the action's type, with the most of its fixed
    // fields as the action has them (a play's `effect`, a resolve's `what`).
    let alike = |m: &crate::kernel::moves::Move| match (m.action.as_object(), event.action.as_object()) {
        (Some(fixed), Some(given)) => fixed.iter().filter(|(k, v)| given.get(*k) == Some(v)).count(),
        _ => 0,
    };
    let same_type = mine.iter().filter(|m| m.kind.name() == kind);
    // `max_by_key` keeps the last of equals: reversed, the first offered.
    let message = match same_type.rev().max_by_key(|m| alike(m)) {
        Some(m) => format!(
            "{who}'s {kind} is not one of the moves offered now; as \"{}\": {}",
            m.label,
            m.admits(&event.action).expect_err("no move admits it")
        ),
        None => format!("{who} is offered no {kind} now"),
    };
    Violation::new(&table.view(), "an action is recorded as one of the moves offered now (`arbiter moves`)", message)
}

/// Creates a game: event 0 with the header. `opened_by` is the actor of event 0.
pub fn create(
    store: &dyn Store,
    game: &str,
    header: &Header,
    opened_by: &str,
    at: Option<String>,
) -> Result<Event, RecordError> {
    check_game_name(game).map_err(RecordError::Input)?;
    let action = serde_json::to_value(header).map_err(|e| RecordError::Input(e.to_string()))?;
    crate::event::check_name("actor", opened_by).map_err(RecordError::Input)?;
    let draft = Draft { actor: opened_by.to_string(), action, at };
    let (event, bytes) = seal(&draft, None, Utc::now()).map_err(|e| RecordError::Input(e.to_string()))?;
    Folder::new().next(&event, &Vec::<Event>::new()).map_err(refused)?;
    store.append(game, &event, &bytes)?;
    Ok(event)
}

impl<'s> Recorder<'s> {
    /// The game folded at its head, from its latest snapshot that checks out
    /// (else from seq 0), every event read verified on the way; snapshots
    /// kept every `limits::SNAPSHOT_EVERY` events.
    pub fn load(store: &'s dyn Store, game: &str) -> Result<Recorder<'s>, RecordError> {
        Recorder::load_with(store, game, SNAPSHOT_EVERY)
    }

    /// `load`, keeping a snapshot every `every` events (0: none).
    pub fn load_with(store: &'s dyn Store, game: &str, every: u64) -> Result<Recorder<'s>, RecordError> {
        let source = StoredGame::new(store, game);
        let (mut folder, mut head) = match source.snapshot(u64::MAX) {
            Some((folder, link)) => (folder, Some(link)),
            None => (Folder::new(), None),
        };
        for event in source.events_from(folder.len()) {
            let event = event?;
            folder.push(&event, &source).map_err(|e| broken(e, "no longer legal"))?;
            head = Some(event.link());
        }
        match head {
            Some(head) => Ok(Recorder { source, folder, head, every, unfolded: None }),
            None => Err(RecordError::NoSuchGame(game.to_string())),
        }
    }

    /// Whether a snapshot is kept after event `seq`.
    fn snapshot_after(&self, seq: u64) -> bool {
        self.every > 0 && seq > 0 && seq.is_multiple_of(self.every)
    }

    /// Keeps snapshots beside the events just stored, and removes the one
    /// two before each unless it is one of the sparse ones kept for good
    /// (`limits::SNAPSHOT_SPARSE`). A cache: one that is not kept (a full
    /// disk) makes later reads slower, not wrong.
    fn keep_snapshots(&self, snapshots: &[(u64, Vec<u8>)]) {
        let (store, game) = (self.source.store, &self.source.game);
        for (seq, bytes) in snapshots {
            if store.put_snapshot(game, *seq, bytes).is_err() {
                continue;
            }
            // The two latest stay: any seq near the head is within
            // `every` events after one of them (`replay --from` near the end).
            if let Some(before) = seq.checked_sub(2 * self.every).filter(|b| *b > 0)
                && !kept_for_good(before, self.every)
            {
                let _ = store.delete_snapshot(game, before);
            }
        }
    }

    pub fn table(&self) -> &Table {
        self.folder.table().expect("a loaded game has a state")
    }
    pub fn folder(&self) -> &Folder {
        &self.folder
    }
    pub fn head(&self) -> &Link {
        &self.head
    }

    /// Checks a submission against the rules at the head without storing it.
    pub fn check(&self, sub: &Submission) -> Result<(Event, Vec<u8>, Next), RecordError> {
        let (event, bytes) = sealed_after(sub, self.folder.table(), &self.head)?;
        offered_first(&self.folder, &event, &self.source)?;
        let next = self.folder.next(&event, &self.source).map_err(refused)?;
        Ok((event, bytes, next))
    }

    /// Checks a batch in order against the rules without storing anything;
    /// on refusal, the index of the first bad submission.
    pub fn check_batch(&self, subs: &[Submission]) -> Result<(), (usize, RecordError)> {
        self.seal_batch(subs, self.folder.clone(), false).map(|_| ())
    }

    /// Seals `subs` in order after the head, each folded on `folder` (the
    /// state at the head): the events with their bytes, the view after each
    /// (if `with_views`), and the state after the last; with views, the
    /// snapshots to keep once stored too.
    #[allow(clippy::type_complexity)]
    fn seal_batch(
        &self,
        subs: &[Submission],
        mut folder: Folder,
        with_views: bool,
    ) -> Result<(Vec<(Event, Vec<u8>)>, Vec<View>, Folder, Vec<(u64, Vec<u8>)>), (usize, RecordError)> {
        let mut snapshots = Vec::new();
        let next = self.head.seq + 1;
        let mut head = self.head.clone();
        let mut sealed: Vec<(Event, Vec<u8>)> = Vec::with_capacity(subs.len());
        let mut events: Vec<Event> = Vec::with_capacity(subs.len());
        let mut views = Vec::with_capacity(subs.len());
        for (i, sub) in subs.iter().enumerate() {
            let (event, bytes) = sealed_after(sub, folder.table(), &head).map_err(|e| (i, e))?;
            let source = Pending { stored: &self.source, next, batch: &events };
            offered_first(&folder, &event, &source).map_err(|e| (i, e))?;
            let folded = folder.next(&event, &source).map_err(|e| (i, refused(e)))?;
            folder.commit(&event, folded);
            if with_views {
                views.push(folder.table().expect("a folded game has a state").view());
                if self.snapshot_after(event.seq) {
                    snapshots.push((event.seq, folder.snapshot(&event.hash)));
                }
            }
            head = event.link();
            events.push(event.clone());
            sealed.push((event, bytes));
        }
        Ok((sealed, views, folder, snapshots))
    }

    /// The state at `head` folded again from the store (from its latest
    /// snapshot at or before it), after an append folded in place was not
    /// stored. If that fails too, the recorder appends nothing more.
    fn refold(&mut self) {
        let head = self.head.seq;
        let mut folder = match self.source.snapshot(head) {
            Some((folder, _)) => folder,
            None => Folder::new(),
        };
        let mut folded = || -> Result<(), RecordError> {
            for event in self.source.events_from(folder.len()).take((head + 1).saturating_sub(folder.len()) as usize) {
                folder.push(&event?, &self.source).map_err(|e| broken(e, "no longer legal"))?;
            }
            match folder.len() == head + 1 {
                true => Ok(()),
                false => Err(RecordError::Io(format!("the store holds fewer than {} events", head + 1))),
            }
        };
        match folded() {
            Ok(()) => self.folder = folder,
            Err(e) => {
                self.unfolded =
                    Some(format!("the state at seq {head} could not be folded again after a failed append: {e}"))
            }
        }
    }

    /// Appends one action. With `expect`, it must go at that seq (optimistic
    /// concurrency); a retry of an append already stored at `expect` returns
    /// the stored event.
    pub fn append(&mut self, sub: &Submission, expect: Option<u64>) -> Result<Appended, RecordError> {
        let mut done = self.append_batch(std::slice::from_ref(sub), expect).map_err(|(_, e)| e)?;
        Ok(done.pop().expect("one appended"))
    }

    /// The leading run of `subs` already stored at `expect`, `expect + 1`,
    /// ... (same actor and action): a retry of a batch whose answer was
    /// lost. Empty without `expect`.
    pub fn already_stored(&self, subs: &[Submission], expect: Option<u64>) -> Result<Vec<Event>, RecordError> {
        let Some(expected) = expect else { return Ok(Vec::new()) };
        let next = self.head.seq + 1;
        let mut stored = Vec::new();
        for (i, sub) in subs.iter().enumerate() {
            let seq = expected.saturating_add(i as u64);
            if seq >= next {
                break;
            }
            match self.source.store.get(&self.source.game, seq)? {
                Some(e) if e.actor == sub.actor && e.action == sub.action => stored.push(e),
                _ => break,
            }
        }
        Ok(stored)
    }

    /// Appends `subs` in order as one durable write (one
    /// `Store::append_batch`: all of them or none, one sync): each is sealed
    /// after the one before and folded, and nothing is stored unless every
    /// one is legal. With `expect`, the batch must go at that seq; a leading
    /// run already stored there (a retry, as for `append`) is returned as
    /// duplicates and the rest goes at the head. On failure, the index of
    /// the submission it concerns; nothing from there on was stored.
    pub fn append_batch(
        &mut self,
        subs: &[Submission],
        expect: Option<u64>,
    ) -> Result<Vec<Appended>, (usize, RecordError)> {
        let stored = self.store_batch(subs, expect)?;
        let durable = self.source.store.wait_durable(stored.ticket);
        self.acknowledge(stored, durable)
    }

    /// The first half of `append_batch`: checks and stores, and returns
    /// before the events are durable (`Store::insert_batch`), for a caller
    /// that waits for the disk without holding a thread (the server:
    /// `Store::durable`), then hands the result to `acknowledge`. Later
    /// appends through this recorder may be stored meanwhile: they follow
    /// these, and no sync covers them without covering these.
    pub fn store_batch(&mut self, subs: &[Submission], expect: Option<u64>) -> Result<Stored, (usize, RecordError)> {
        let sealed = self.seal(subs, expect)?;
        if sealed.events.is_empty() {
            // A retry of appends already stored: they may be stored by an
            // insert still waiting for its sync, so the answer waits for
            // every insert made so far (at no cost once they are durable).
            let ticket = self.source.store.newest_ticket();
            return Ok(self.stored(sealed, ticket));
        }
        match self.source.store.insert_batch(&self.source.game, &sealed.events) {
            Ok(ticket) => Ok(self.stored(sealed, ticket)),
            Err(e) => {
                if sealed.folder.is_none() {
                    // Folded in place: folded again from the store.
                    self.unfolded = None;
                    self.refold();
                }
                Err((sealed.first, e.into()))
            }
        }
    }

    /// `store_batch` with the store's append awaited, not made here
    /// (`Store::append_batch_async`): for the server's async threads on a
    /// store whose append is a round trip (PostgreSQL). Ok once stored and
    /// durable (`acknowledge` then keeps the snapshots). On an error this
    /// recorder's fold is as it was, or, for one event folded in place,
    /// marked unfolded (`is_unfolded`): it is not folded again here (the
    /// store's reads would hold an async thread), and the caller drops it
    /// and loads the game again.
    pub async fn store_batch_async(
        &mut self,
        subs: &[Submission],
        expect: Option<u64>,
    ) -> Result<Stored, (usize, RecordError)>
    where
        's: 'static,
    {
        let sealed = self.seal(subs, expect)?;
        let store: &'static dyn Store = self.source.store;
        if sealed.events.is_empty() {
            // A retry of appends already stored, answered once every
            // insert made so far is durable (as `store_batch`'s).
            return match store.durable(store.newest_ticket()).await {
                Ok(()) => Ok(self.stored(sealed, Ticket::DURABLE)),
                Err(e) => Err((sealed.first, e.into())),
            };
        }
        match store.append_batch_async(&self.source.game, &sealed.events).await {
            Ok(()) => Ok(self.stored(sealed, Ticket::DURABLE)),
            Err(e) => Err((sealed.first, e.into())),
        }
    }

    /// Whether this recorder's fold is no longer at its head (an append
    /// folded in place and not stored, or a store failed under it): it
    /// appends nothing more, and the game is to be loaded again.
    pub fn is_unfolded(&self) -> bool {
        self.unfolded.is_some()
    }

    /// Checks, seals and folds `subs` after the head, storing nothing: the
    /// leading run already stored at `expect` (a retry) as duplicates, and
    /// the rest sealed to store. One event is folded on the recorder's own
    /// state in place (a copy of the state and the drop of the old one
    /// were a fifth of an append's CPU with 64 tables): a refusal leaves it
    /// as it was, and until `stored` says the store took it the recorder
    /// is marked unfolded, so a fold past what the store holds never
    /// appends. Several fold on a copy, which replaces the state once they
    /// are stored.
    fn seal(&mut self, subs: &[Submission], expect: Option<u64>) -> Result<Sealed, (usize, RecordError)> {
        let done: Vec<Appended> = self
            .already_stored(subs, expect)
            .map_err(|e| (0, e))?
            .into_iter()
            .map(|event| {
                let view = self.table().view();
                let may_act_names = self.names_of(&view);
                Appended { event, duplicate: true, view, may_act_names }
            })
            .collect();
        let (k, rest) = (done.len(), &subs[done.len()..]);
        let mut sealed =
            Sealed { done, first: k, events: Vec::new(), views: Vec::new(), folder: None, snapshots: Vec::new() };
        if rest.is_empty() {
            return Ok(sealed);
        }
        if let Some(why) = &self.unfolded {
            return Err((k, RecordError::Io(format!("{why}; load the game again"))));
        }
        let next = self.head.seq + 1;
        if let Some(expected) = expect
            && expected + k as u64 != next
        {
            return Err((k, RecordError::Conflict { expected: expected + k as u64, next }));
        }
        match rest {
            [sub] => {
                let (event, bytes) = sealed_after(sub, self.folder.table(), &self.head).map_err(|e| (k, e))?;
                offered_first(&self.folder, &event, &self.source).map_err(|e| (k, e))?;
                if let Err(e) = self.folder.push(&event, &self.source) {
                    return Err((k, self.with_offers(refused(e), &sub.actor)));
                }
                self.unfolded = Some(format!("an append at seq {} was folded here but not stored", event.seq));
                sealed.views.push(self.table().view());
                if self.snapshot_after(event.seq) {
                    sealed.snapshots.push((event.seq, self.folder.snapshot(&event.hash)));
                }
                sealed.events.push((event, bytes));
            }
            _ => {
                let (events, views, folder, snapshots) =
                    self.seal_batch(rest, self.folder.clone(), true).map_err(|(i, e)| (k + i, e))?;
                (sealed.events, sealed.views, sealed.folder, sealed.snapshots) =
                    (events, views, Some(folder), snapshots);
            }
        }
        Ok(sealed)
    }

    /// The store took `sealed` (`ticket` makes it durable): the head and
    /// the fold move on to its last event.
    fn stored(&mut self, sealed: Sealed, ticket: Ticket) -> Stored {
        let Sealed { mut done, first, events, views, folder, snapshots } = sealed;
        if let Some(last) = events.last() {
            self.head = last.0.link();
            match folder {
                Some(folder) => self.folder = folder,
                None => self.unfolded = None,
            }
        }
        done.extend(events.into_iter().zip(views).map(|((event, _), view)| {
            let may_act_names = self.names_of(&view);
            Appended { event, duplicate: false, view, may_act_names }
        }));
        Stored { done, first, ticket, snapshots }
    }

    /// Who may act in `view`, by name from the game's header.
    fn names_of(&self, view: &View) -> Vec<String> {
        self.folder.table().map_or_else(Vec::new, |t| view.may_act.iter().map(|id| t.header.name_of(id)).collect())
    }

    /// A refusal of `actor`'s action at the head, with what `actor` may
    /// record there instead (`Violation::offered`): the moves are worked out
    /// only here, on the refusal's cold path.
    fn with_offers(&self, e: RecordError, actor: &str) -> RecordError {
        match (e, self.folder.table()) {
            (RecordError::Refused(mut v), Some(table)) => {
                v.offered = crate::kernel::moves::offered_to(&table.moves(self.head.seq + 1), actor);
                RecordError::Refused(v)
            }
            (e, _) => e,
        }
    }

    /// The second half of `append_batch`: `durable` is what the store said
    /// of `stored.ticket`. Once durable, the appends are acknowledged and
    /// their snapshots kept. If not, the store has failed (a sync that
    /// fails fails it), this recorder's fold is past what is durable, and
    /// it appends nothing more: the game is loaded again.
    pub fn acknowledge(
        &mut self,
        stored: Stored,
        durable: Result<(), AppendError>,
    ) -> Result<Vec<Appended>, (usize, RecordError)> {
        if let Err(e) = durable {
            self.unfolded = Some(format!("an append was stored but not made durable ({e})"));
            return Err((stored.first, e.into()));
        }
        self.keep_snapshots(&stored.snapshots);
        Ok(stored.done)
    }
}

/// Whether the snapshot after `seq` is one of the sparse ones kept for
/// good (`limits::SNAPSHOT_SPARSE`).
fn kept_for_good(seq: u64, every: u64) -> bool {
    seq.is_multiple_of(every * SNAPSHOT_SPARSE)
}

/// Whether appends that reached `head`, keeping a snapshot every `every`
/// events (`Recorder::keep_snapshots`), leave the one after `seq` kept: one
/// of the two latest or a sparse one. What an import or a copy writes, so
/// that a game stored whole has the snapshots it would have had, had it
/// been appended.
pub(crate) fn kept_after(seq: u64, head: u64, every: u64) -> bool {
    let latest = head - head % every.max(1);
    every > 0
        && seq > 0
        && seq <= head
        && seq.is_multiple_of(every)
        && (kept_for_good(seq, every) || seq + every >= latest)
}

/// Appends checked, sealed and folded by `Recorder::seal`, not yet stored.
struct Sealed {
    /// The leading run already stored (a retry).
    done: Vec<Appended>,
    /// The index in the batch of the first event to store.
    first: usize,
    /// The events to store, each with its bytes, and the view after each.
    events: Vec<(Event, Vec<u8>)>,
    views: Vec<View>,
    /// The state after the last of several; None when one was folded in
    /// place (or none is to be stored).
    folder: Option<Folder>,
    snapshots: Vec<(u64, Vec<u8>)>,
}

/// Appends stored by `Recorder::store_batch`, not yet acknowledged: only
/// `Recorder::acknowledge`, once the store says they are durable, returns
/// them to the caller.
#[must_use = "stored appends are acknowledged only once durable (`Recorder::acknowledge`)"]
pub struct Stored {
    done: Vec<Appended>,
    /// The index in the batch of the first event newly stored (those
    /// before were already stored: a retry).
    first: usize,
    /// What the store waits on to make them durable.
    pub ticket: Ticket,
    snapshots: Vec<(u64, Vec<u8>)>,
}

impl Stored {
    /// Whether `Recorder::acknowledge` keeps snapshots (a write to the
    /// store each) for these appends.
    pub fn keeps_snapshots(&self) -> bool {
        !self.snapshots.is_empty()
    }
}
