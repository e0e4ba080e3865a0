//! The group commit: an insert checks its events against the game's head
//! under the log's mutex, adds them to their chunks in memory
//! (`super::write_back::Unsynced`) and takes a ticket; then one leader at
//! a time runs a round's sync (the journal's records, or sled's own sync)
//! while the appenders it covers wait, on threads or on tokio, and wake
//! together.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar};
use std::time::Instant;

use super::keys::STORED_LEVEL;
use super::write_back::{Behind, GameChunks, UNSYNCED_LIMIT, Unsynced};
use super::{Failure, SledStore};
use crate::event::Event;
use crate::store::chunk::{self, EVENTS_PER_CHUNK, LEAVES_PER_CHUNK};
use crate::store::journal;
use crate::store::{AppendError, Synced};
use crate::tlog::merkle::{Hash, leaf_hash};

/// The last ticket taken, and the log's size when it was taken.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Written {
    pub(super) ticket: u64,
    pub(super) size: u64,
}

/// Where the group commit is: the last ticket taken, the highest durable,
/// whether a leader is syncing now (at most one is), and what the next
/// sync must write.
#[derive(Debug, Default)]
pub(super) struct Commit {
    pub(super) written: Written,
    pub(super) durable: u64,
    pub(super) syncing: bool,
    /// How many syncs have begun: the running one's number, while one runs.
    pub(super) round: u64,
    /// The highest ticket the running sync covers.
    pub(super) covering: u64,
    /// How many followers are waiting now (for tests).
    pub(super) waiting: u64,
    /// The journal's records of the events inserted since the last sync
    /// began, in the order of the log (`insert`; see `super::journal`).
    pub(super) journal: Vec<u8>,
    /// Something was inserted since the last sync began that the journal
    /// does not hold (a large batch, `Unsynced` past its limit, the
    /// close's `settle`): the next sync is sled's own.
    pub(super) sled_sync: bool,
}

/// Ends a leader's turn (its sync's round) even if its sync panics or
/// never runs, so that followers are not left waiting for a sync that will
/// never end.
pub(super) struct Leading<'s> {
    pub(super) store: &'s SledStore,
    pub(super) round: u64,
    /// Set once the sync has run and its result is recorded.
    pub(super) finished: bool,
}

impl Drop for Leading<'_> {
    /// Wakes every follower of this round (covered, or to see the
    /// failure), and one of the next round's to lead it; after a failure,
    /// every one of the next round's too, to see it. Followers on async
    /// threads (`durable_async`) are all woken, this round's and the
    /// next's: which of the next round's leads is decided under the lock.
    fn drop(&mut self) {
        // A leader that panicked in its sync, or whose sync never ran (its
        // round could not be handed to the syncing thread), took its
        // round's journal records with it: nothing may count them durable,
        // so the store is failed. (Not `thread::panicking()`: a store
        // dropped while its thread unwinds syncs, and that sync may succeed.)
        if !self.finished {
            self.store.fail(Failure { why: "a sync panicked or never ran".into(), errno: None });
        }
        let SledStore { commit, committed, woken, .. } = self.store;
        commit.lock().unwrap_or_else(|p| p.into_inner()).syncing = false;
        let (this, next) = ((self.round % 2) as usize, ((self.round + 1) % 2) as usize);
        committed[this].notify_all();
        woken[this].notify_waiters();
        match self.store.failure() {
            Some(_) => committed[next].notify_all(),
            None => committed[next].notify_one(),
        }
        woken[next].notify_waiters();
    }
}

/// What a caller of the group commit does next (`SledStore::turn`).
pub(super) enum Turn<'s> {
    /// Its ticket is durable.
    Done,
    /// Wait for the end of this round's sync.
    Wait(u64),
    /// Lead a sync: the round begun for it.
    Lead(Round<'s>),
}

/// A sync a leader runs (`SledStore::lead`): the tickets it covers and
/// what it writes, taken under the commit's lock as its round began.
pub(super) struct Round<'s> {
    pub(super) leading: Leading<'s>,
    pub(super) covers: Written,
    pub(super) records: Vec<u8>,
    pub(super) sled_sync: bool,
}

/// The journal's record of an insert of `events` to `game`, or none for a
/// batch too long for one record (`journal::MOST_EVENTS`): sled's own sync
/// covers that.
pub(super) fn journal_record(game: &str, events: &[(Event, Vec<u8>)]) -> Option<Vec<u8>> {
    if events.is_empty() || events.len() > journal::MOST_EVENTS {
        return None;
    }
    let mut record = Vec::new();
    journal::encode(game, events.iter().map(|(_, bytes)| bytes.as_slice()), &mut record);
    Some(record)
}

impl SledStore {
    /// Takes a ticket for an insert, the log then holding `size` events,
    /// and gives the next sync its journal `record` (`journal_record`), or,
    /// with none, asks for sled's own sync. The caller holds the log's
    /// lock (`unsynced`), so tickets and records are taken in the order of
    /// the log.
    pub(super) fn ticket_at(&self, size: u64, record: Option<Vec<u8>>) -> u64 {
        let mut commit = self.commit.lock().unwrap_or_else(|p| p.into_inner());
        commit.written.ticket += 1;
        commit.written.size = size;
        match record {
            Some(record) => commit.journal.extend_from_slice(&record),
            None => commit.sled_sync = true,
        }
        commit.written.ticket
    }

    /// Makes every setting written so far durable: sled's flush and
    /// fdatasync (`sync_now`), run here beside the group commit, while
    /// appends go on through the journal. Nothing is written back first:
    /// sled's events stay as of its last write-back (a transaction,
    /// whole), and the journal keeps every record it holds, as after
    /// sled's flush on its timer; so an open after a crash finds the same
    /// store. (As a round of sled's own sync, a setting held up every
    /// appender of that round and the next: the server's checkpoint,
    /// whose size is a setting written each second, stalled every table
    /// for 12 to 18 ms at 64 tables, most of the API's slowest appends.
    /// With a write-back too, beside the rounds, the p99 was 0.2 to 5.5
    /// ms higher than without in three turns: a write-back is 10 to 15 ms
    /// of one core's time, each second.)
    pub(super) fn sync_settings(&self) -> Result<(), AppendError> {
        let began = Instant::now();
        {
            let _one = self.sled_syncing.lock().unwrap_or_else(|p| p.into_inner());
            self.refuse()?;
            self.sync_now().map_err(|failure| self.failed_with(failure))?;
        }
        self.tell_watcher(Synced { took: began.elapsed(), events: 0 });
        Ok(())
    }

    /// Tells the watcher (`on_sync`) of a sync that succeeded, with the
    /// watcher's lock let go first: it may take its time.
    pub(super) fn tell_watcher(&self, synced: Synced) {
        let watcher = self.sync_watcher.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some(watch) = watcher {
            watch(synced);
        }
    }

    /// Takes a ticket for an insert of no events (an empty insert, the
    /// close's `settle`): the sync that covers it is sled's own.
    pub(super) fn ticket(&self) -> u64 {
        let unsynced = self.unsynced.lock().unwrap_or_else(|p| p.into_inner());
        self.ticket_at(unsynced.frontier.size(), None)
    }

    /// Makes the insert with `ticket` durable (group commit, leader and
    /// followers). If a sync that began after the insert has finished,
    /// nothing to do. If one is running, wait for it to end if it covers
    /// this ticket, else for the next round, which one of its waiters will
    /// lead. Else this caller leads: it syncs everything written so far
    /// (its own insert and any others') with no lock held, then wakes its
    /// round's waiters at once and one of the next round's. A sync that
    /// fails fails the store (see the module's comment), and every waiter
    /// it did not cover gets the error.
    pub(super) fn make_durable(&self, ticket: u64) -> Result<(), AppendError> {
        let mut commit = self.commit.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            match self.turn(&mut commit, ticket)? {
                Turn::Done => return Ok(()),
                Turn::Wait(round) => {
                    commit.waiting += 1;
                    commit = self.committed[(round % 2) as usize].wait(commit).unwrap_or_else(|p| p.into_inner());
                    commit.waiting -= 1;
                }
                Turn::Lead(round) => {
                    drop(commit);
                    return self.lead_here(round);
                }
            }
        }
    }

    /// `make_durable` for a caller on tokio's async threads (the server):
    /// a follower waits without holding its thread, and a leader hands its
    /// round's sync to the syncing thread (`syncer`), then waits for it as
    /// a follower. So an append hops to another thread only when it leads
    /// a sync (at 64 tables through the API, one append in 8 to 14), not
    /// every time.
    pub(super) async fn durable_async(&'static self, ticket: u64) -> Result<(), AppendError> {
        loop {
            let turn = {
                let mut commit = self.commit.lock().unwrap_or_else(|p| p.into_inner());
                match self.turn(&mut commit, ticket)? {
                    Turn::Done => return Ok(()),
                    // Made under the lock: a sync that ends after the lock
                    // is let go wakes it, even before it is first polled
                    // (`Notify::notify_waiters`).
                    Turn::Wait(round) => Err(self.woken[(round % 2) as usize].notified()),
                    Turn::Lead(round) => Ok(round),
                }
            };
            match turn {
                Err(woken) => woken.await,
                // Its ticket is in the round: the next turn waits for it.
                Ok(round) => self.hand_over(round)?,
            }
        }
    }

    /// Hands `round` to the syncing thread, started on first use. If the
    /// thread cannot be started, the sync runs here, once; if it is gone
    /// (it panicked in a sync, which failed the store), the round is
    /// dropped, and its `Leading` fails the store.
    pub(super) fn hand_over(&'static self, round: Round<'static>) -> Result<(), AppendError> {
        let mut syncer = self.syncer.lock().unwrap_or_else(|p| p.into_inner());
        if syncer.is_none() {
            let (to_sync, rounds) = std::sync::mpsc::channel::<Round<'static>>();
            let started = std::thread::Builder::new().name("arbiter-sync".into()).spawn(move || {
                for round in rounds {
                    // A failure fails the store, which its followers see.
                    self.lead_on_syncer(round);
                }
            });
            if started.is_err() {
                drop(syncer);
                return self.lead_here(round);
            }
            *syncer = Some(to_sync);
        }
        let _ = syncer.as_ref().expect("started").send(round);
        Ok(())
    }

    /// The group commit's decision for `ticket`, under its lock: durable
    /// already; the store failed; wait for a round; or lead the next sync,
    /// whose round it begins here (covering every ticket taken so far).
    pub(super) fn turn(&self, commit: &mut Commit, ticket: u64) -> Result<Turn<'_>, AppendError> {
        if commit.durable >= ticket {
            return Ok(Turn::Done);
        }
        if let Err(e) = self.refuse() {
            // The store may have failed outside any sync (an insert that
            // sled refused), with no follower woken to see it: wake them
            // all, or those of the next round would wait for a leader
            // that never comes. (Holding the lock: none is missed.)
            self.committed.iter().for_each(Condvar::notify_all);
            self.woken.iter().for_each(tokio::sync::Notify::notify_waiters);
            return Err(e);
        }
        if commit.syncing {
            return Ok(Turn::Wait(if ticket <= commit.covering { commit.round } else { commit.round + 1 }));
        }
        commit.syncing = true;
        commit.round += 1;
        // Every ticket up to `covers` has its record (if any) in the
        // journal's records taken here, so the sync includes all of
        // them: those records, or sled's own sync of every insert made
        // so far (`sync_through`).
        let covers = commit.written;
        commit.covering = covers.ticket;
        Ok(Turn::Lead(Round {
            leading: Leading { store: self, round: commit.round, finished: false },
            covers,
            records: std::mem::take(&mut commit.journal),
            sled_sync: std::mem::take(&mut commit.sled_sync),
        }))
    }

    /// Runs the sync of `round` with no lock held, records what it made
    /// durable, then ends the round (waking its followers; `Leading`).
    /// Returns the sync of sled's that a rotation of the journal left to
    /// run behind the round, if it did (`Behind`).
    pub(super) fn lead(&self, round: Round<'_>) -> Result<Option<Behind>, AppendError> {
        let Round { mut leading, covers, records, sled_sync } = round;
        let began = Instant::now();
        let synced = self.sync_through(&records, sled_sync);
        let took = began.elapsed();
        let mut commit = self.commit.lock().unwrap_or_else(|p| p.into_inner());
        let result = match synced {
            Ok(behind) => {
                commit.durable = commit.durable.max(covers.ticket);
                let before = self.durable_size.fetch_max(covers.size, Ordering::SeqCst);
                Ok((covers.size.saturating_sub(before), behind))
            }
            // Failed before the followers wake, so that they see it.
            Err(failure) => Err(self.failed_with(failure)),
        };
        drop(commit);
        leading.finished = true;
        drop(leading);
        let (events, behind) = result?;
        self.tell_watcher(Synced { took, events });
        Ok(behind)
    }

    /// `lead`, then the sync of sled's it leaves to run behind the round,
    /// here: the leader's own append, durable already, returns after it;
    /// the other appenders of the round do not wait for it.
    pub(super) fn lead_here(&self, round: Round<'_>) -> Result<(), AppendError> {
        if let Some(behind) = self.lead(round)? {
            self.write_back_behind(behind);
        }
        Ok(())
    }

    /// `lead` on the syncing thread (`hand_over`), whose next round must
    /// not wait for a sync of sled's: that runs on a thread of its own.
    pub(super) fn lead_on_syncer(&'static self, round: Round<'static>) {
        let Ok(Some(behind)) = self.lead(round) else { return };
        let started =
            std::thread::Builder::new().name("arbiter-write-back".into()).spawn(move || self.write_back_behind(behind));
        if started.is_err() {
            // No thread to be had: it runs here, once.
            self.write_back_behind(behind);
        }
    }

    /// One sync of the group commit, covering every ticket taken before it
    /// began: `records` written to the journal and synced, one trip to the
    /// disk. When that would take the journal past `journal::LIMIT`, it is
    /// rotated first (`Journal::rotate`), and the sync of sled's that will
    /// let its older file go is returned, for the leader to run once the
    /// round has ended (`Behind`). When `sled_sync` asks for it, or the
    /// journal is full again before the last rotation's sync has ended,
    /// the sync is sled's own, here: every insert so far written into
    /// sled (`write_back`: those tickets, and any taken since), then
    /// `sync_now`, after which both of the journal's files are emptied.
    pub(super) fn sync_through(&self, records: &[u8], sled_sync: bool) -> Result<Option<Behind>, Failure> {
        let mut journal = self.journal.lock().unwrap_or_else(|p| p.into_inner());
        let full = journal.bytes() + records.len() as u64 > journal::LIMIT;
        if sled_sync || (full && journal.older_bytes() > 0) {
            {
                // Waits for a sync behind a rotation, if one runs.
                let _one = self.sled_syncing.lock().unwrap_or_else(|p| p.into_inner());
                self.write_back()?;
                self.sync_now()?;
            }
            // Both files: the sync covers every insert made before it,
            // and so every record the journal holds.
            return journal.empty().map(|()| None).map_err(|e| Failure::io("the journal could not be emptied", &e));
        }
        let rotate = full && journal.bytes() > 0;
        if rotate {
            journal.rotate().map_err(|e| Failure::io("the journal could not be rotated", &e))?;
        }
        self.syncs.fetch_add(1, Ordering::Relaxed);
        journal.append(records).map_err(|e| Failure::io("the journal's write failed", &e))?;
        Ok(rotate.then(|| Behind { rotation: journal.rotations() }))
    }

    /// Checks `events` (in order, all of one game), adds them and their
    /// leaves to their chunks in memory (`Unsynced`) and takes a ticket;
    /// not yet durable; returns the ticket for `make_durable`. The log's
    /// lock is held from reading the head to the ticket, so positions in
    /// the log are given in the order events are inserted, with no gap,
    /// and a seq is never taken twice (no fork). What can fail (reading
    /// the chunks to add to) comes before anything is changed: a refused
    /// insert changes nothing.
    pub(super) fn insert(&self, game: &str, events: &[(Event, Vec<u8>)]) -> Result<u64, AppendError> {
        self.refuse()?;
        if let Some(why) = &self.edge_broken {
            return Err(AppendError::Io(format!("{why}; nothing can be appended (`arbiter verify --all` says where)")));
        }
        if events.is_empty() {
            return Ok(self.ticket());
        }
        crate::store::check_incoming(events)?;
        let tree = self.tree(game).map_err(|e| AppendError::Io(e.to_string()))?;
        // What needs no lock is done before the log's lock is taken: every
        // other table's insert waits on that lock.
        let hashes: Vec<Hash> = events.iter().map(|(_, b)| leaf_hash(b)).collect();
        let record = journal_record(game, events);
        let mut unsynced = self.unsynced.lock().unwrap_or_else(|p| p.into_inner());
        self.refuse()?;
        let head = match unsynced.heads.get(game) {
            Some(head) => Some(head.clone()),
            None => {
                drop(unsynced);
                let head = self.durable_head(game, &tree)?;
                unsynced = self.unsynced.lock().unwrap_or_else(|p| p.into_inner());
                // Another insert to this game may have come meanwhile.
                unsynced.heads.get(game).cloned().or(head)
            }
        };
        let prev = crate::store::check_follows(game, events, head)?;
        // The chunks the first event and leaf go to, read from sled when
        // not in memory (and not new): the rest go to new chunks.
        let first_seq = events[0].0.seq;
        let first_index = unsynced.frontier.size();
        let (game_chunk, _) = chunk::event_place(first_seq);
        let (leaf_chunk, _) = chunk::leaf_place(first_index);
        let loaded_events = match unsynced.games.get(game).is_some_and(|g| g.chunks.contains_key(&game_chunk)) {
            true => None,
            false if first_seq.is_multiple_of(EVENTS_PER_CHUNK) => Some(chunk::Events::default()),
            false => {
                let chunk = self.stored_events_chunk(game, &tree, game_chunk)?;
                Some(chunk.ok_or_else(|| {
                    AppendError::Io(format!("{game}'s events from seq {} are missing", game_chunk * EVENTS_PER_CHUNK))
                })?)
            }
        };
        let loaded_leaves = match unsynced.leaves.contains_key(&leaf_chunk) {
            true => None,
            false if first_index.is_multiple_of(LEAVES_PER_CHUNK) => Some(chunk::Leaves::default()),
            false => {
                let chunk = self.stored_leaves_chunk(leaf_chunk)?;
                Some(chunk.ok_or_else(|| {
                    AppendError::Io(format!("the log's leaves from {} are missing", leaf_chunk * LEAVES_PER_CHUNK))
                })?)
            }
        };
        // Nothing fails from here on.
        let loaded = loaded_events.as_ref().map_or(0, |c| c.bytes().len()) + 64 * 60;
        unsynced.held += loaded + events.iter().map(|(_, b)| b.len() + 72).sum::<usize>();
        let record = record.filter(|_| unsynced.held <= UNSYNCED_LIMIT);
        let Unsynced { frontier, heads, games, leaves, nodes, .. } = &mut *unsynced;
        let kept = games.entry(game.to_string()).or_insert_with(|| GameChunks { tree, chunks: BTreeMap::new() });
        if let Some(chunk) = loaded_events {
            kept.chunks.insert(game_chunk, Arc::new(chunk));
        }
        if let Some(chunk) = loaded_leaves {
            leaves.insert(leaf_chunk, Arc::new(chunk));
        }
        for (n, ((event, bytes), hash)) in events.iter().zip(&hashes).enumerate() {
            let index = frontier.size();
            for (level, i, node) in frontier.push(*hash) {
                if level >= STORED_LEVEL {
                    nodes.insert((level, i), node);
                }
            }
            let (c, _) = chunk::event_place(event.seq);
            Arc::make_mut(kept.chunks.entry(c).or_default()).push(index, bytes);
            let (c, _) = chunk::leaf_place(index);
            let leaf = chunk::Leaf { game: game.to_string(), seq: event.seq, continues: n > 0, hash: *hash };
            Arc::make_mut(leaves.entry(c).or_default()).push(leaf);
        }
        let ticket = self.ticket_at(frontier.size(), record);
        heads.insert(game.to_string(), prev);
        Ok(ticket)
    }
}
