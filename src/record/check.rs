//! Whole-record checks: `verify` (hashes, links and a full fold, from the
//! stored bytes on two threads where the record is long), the snapshots
//! against the fold (`verify_snapshots`), and export files read back and
//! imported (`read_export`, `import`).

use std::io::BufRead;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{SyncSender, sync_channel};

use serde::Serialize;

use super::append::kept_after;
use super::{RecordError, StoredGame, broken, canonical_bytes};
use crate::event::{
    Chain, Event, EventError, Link, Parsed, check_game_name, check_link, check_stored, decode, parse_stored,
};
use crate::fold::{Folder, NoSnapshots, Source, StoredBytes};
use crate::limits::{MAX_BATCH_EVENTS, MAX_LINE_BYTES, MAX_STREAM_EVENTS, SNAPSHOT_EVERY};
use crate::store::{ReadError, Store};

/// What a successful verification found.
#[derive(Debug, Clone, Serialize)]
pub struct Verified {
    pub events: u64,
    pub head: String,
    /// Seq ranges that judges' rewinds took back.
    pub rewound: Vec<(u64, u64)>,
}

/// Verifies a record from seq 0: hashes, links, and a full re-fold in which
/// every event must still be legal and every ruling names a real event by
/// its hash and was made by a judge. Streams: memory is one state, whatever
/// the length. No snapshot is used (a rewind folds again from seq 0): a
/// verification never rests on a cache.
pub fn verify<S>(source: &S, expect_head: Option<&str>) -> Result<(Verified, Folder), RecordError>
where
    S: Source + ?Sized,
    S::Error: Into<RecordError>,
{
    verify_from(&NoSnapshots(source), Folder::new(), None, expect_head)
}

/// `verify` from a fold already made (`start`, after the event `prev`
/// links to): the events after it are read, hashed, linked and folded.
///
/// A source that gives its stored bytes (a stored game) is read, checked
/// and folded on two threads when the record is long enough for a thread
/// to pay: one reads the bytes and parses each event (strict, canonical,
/// once), the other checks each hash and link on the same bytes and folds
/// (`each_event`). The first broken event wins, as it would on
/// one thread: the folding thread meets the events, and a reading error,
/// in order.
pub fn verify_from<S>(
    source: &S,
    start: Folder,
    prev: Option<Link>,
    expect_head: Option<&str>,
) -> Result<(Verified, Folder), RecordError>
where
    S: Source + ?Sized,
    S::Error: Into<RecordError>,
{
    verify_each(source, start, prev, expect_head, |_, _| {})
}

/// `verify_from`, with `after` told each event and the fold after it.
fn verify_each<S>(
    source: &S,
    start: Folder,
    prev: Option<Link>,
    expect_head: Option<&str>,
    mut after: impl FnMut(&Event, &Folder),
) -> Result<(Verified, Folder), RecordError>
where
    S: Source + ?Sized,
    S::Error: Into<RecordError>,
{
    let mut folder = start;
    let mut chain = Chain::after(prev);
    each_event(source, folder.len(), None, &mut chain, |event| {
        folder.push(&event, source).map_err(|e| broken(e, "the event is not legal"))?;
        after(&event, &folder);
        Ok(ControlFlow::Continue(()))
    })?;
    let Some(head) = chain.into_last() else {
        return Err(RecordError::Broken { seq: 0, why: "the record is empty".into() });
    };
    if let Some(want) = expect_head
        && want != head.hash
    {
        return Err(RecordError::Broken {
            seq: head.seq,
            why: format!(
                "the head is {}, not the expected {want} (events were added or removed at the end)",
                head.hash
            ),
        });
    }
    let rewound = folder.rewound().to_vec();
    Ok((Verified { events: head.seq + 1, head: head.hash, rewound }, folder))
}

/// Stored events handed from the reading thread to the checking one at a time.
const BATCH: usize = 256;

/// Batches read ahead of the checking at most: memory stays bounded whatever
/// the two threads' pace.
const BATCHES_AHEAD: usize = 4;

/// A stored event as the reading thread hands it over: checked (parsed,
/// and its hash checked against its bytes), or its bytes, where the reading
/// was the slower thread and left that to the checking one (see
/// `read_ahead`).
enum Read {
    Checked(Parsed),
    Bytes { seq: u64, bytes: Vec<u8> },
}

/// A stored event that does not check out, as reading it always said.
fn corrupt(seq: u64, why: EventError) -> RecordError {
    ReadError::Corrupt { seq, why }.into()
}

/// The check of a stored event on its own: strict JSON in canonical form,
/// the envelope, the hash of its bytes and the seq it is stored under.
fn check_read(seq: u64, bytes: &[u8]) -> Result<Parsed, RecordError> {
    let parsed = parse_stored(bytes).map_err(|why| corrupt(seq, why))?;
    check_stored(&parsed, seq, bytes).map_err(|why| corrupt(seq, why))?;
    Ok(parsed)
}

/// Up to `BATCH` stored events, each checked on its own if `check`, and whether
/// reading is over (the events ran out, or one did not check out: nothing
/// after the first broken event matters).
fn read_batch(stored: &mut StoredBytes<'_, RecordError>, check: bool) -> (Vec<Result<Read, RecordError>>, bool) {
    let mut batch = Vec::with_capacity(BATCH);
    while batch.len() < BATCH {
        let Some(item) = stored.next() else {
            return (batch, true);
        };
        let read = item.and_then(|(seq, bytes)| match check {
            true => check_read(seq, &bytes).map(Read::Checked),
            false => Ok(Read::Bytes { seq, bytes }),
        });
        let broken = read.is_err();
        batch.push(read);
        if broken {
            return (batch, true);
        }
    }
    (batch, false)
}

/// The reading thread: batches until reading is over or the checking
/// thread stops taking them (it stopped at a broken event, or was done).
/// `queued` counts the batches handed over and not yet taken. While at
/// least half of `BATCHES_AHEAD` wait, the checking thread is the slower
/// and this one checks the next batch's events on their own too (parsed and
/// hashed: `check_read`); below that, the checking thread is catching up
/// with this one, and the next batch goes unchecked for it to check. So the
/// two share the work whichever is slower. On a long
/// record the reading is: at 1,000,000 events sled's pages no longer fit
/// its cache, and perf showed this thread busy 95% of the time and the
/// checking one 60%; sharing the parsing took verify from about 330,000 to
/// about 500,000 events/s there. (Leaving a batch unparsed whenever none
/// waited gained nothing: one almost always did.)
fn read_ahead(
    mut stored: StoredBytes<'_, RecordError>,
    to_check: SyncSender<Vec<Result<Read, RecordError>>>,
    queued: &AtomicUsize,
) {
    loop {
        let check = queued.load(Ordering::Relaxed) >= BATCHES_AHEAD / 2;
        let (batch, over) = read_batch(&mut stored, check);
        queued.fetch_add(1, Ordering::Relaxed);
        if to_check.send(batch).is_err() || over {
            return;
        }
    }
}

/// The events of `source` from `from` on, each checked as `verify` checks
/// it, then handed to `each`, in seq order, until they run out (or pass
/// `to`), one does not check out (its error), or `each` stops or fails:
/// from their stored bytes on two threads (`each_stored`) where the source
/// has them, else decoded one at a time. Either way each is linked to the
/// one before (`chain`, which starts at the link of the event before `from`).
pub(crate) fn each_event<S>(
    source: &S,
    from: u64,
    to: Option<u64>,
    chain: &mut Chain,
    mut each: impl FnMut(Event) -> Result<ControlFlow<()>, RecordError>,
) -> Result<(), RecordError>
where
    S: Source + ?Sized,
    S::Error: Into<RecordError>,
{
    let within = move |seq: u64| to.is_none_or(|t| seq <= t);
    if let Some(stored) = source.stored_from(from) {
        // Nothing past `to` is read.
        let stored = stored
            .map(|read| read.map_err(Into::into))
            .take_while(move |read| read.as_ref().map_or(true, |(seq, _)| within(*seq)));
        return each_stored(Box::new(stored), chain, each);
    }
    for event in source.events_from(from) {
        let event = event.map_err(Into::into)?;
        if !within(event.seq) {
            break;
        }
        // A broken link is reported at the position where the record breaks.
        let at = chain.last().map_or(0, |p| p.seq + 1);
        chain.push_event(&event).map_err(|why| RecordError::Broken { seq: at, why: why.to_string() })?;
        if each(event)?.is_break() {
            break;
        }
    }
    Ok(())
}

/// Stored events checked from their bytes and handed to `each` in seq
/// order, until they run out, one does not check out (its error), or
/// `each` stops or fails. Two threads: one reads, and checks each event on
/// its own where this one is the slower (`check_read`: strict JSON in
/// canonical form, the envelope, the hash of the bytes, the seq they are
/// stored under); this one checks the rest, links each to the event before
/// (`chain`), then calls `each`. The first batch is read here: a record
/// that ends within it is checked with no thread.
fn each_stored(
    mut stored: StoredBytes<'_, RecordError>,
    chain: &mut Chain,
    mut each: impl FnMut(Event) -> Result<ControlFlow<()>, RecordError>,
) -> Result<(), RecordError> {
    let mut step = |read: Result<Read, RecordError>| {
        let parsed = match read? {
            Read::Checked(parsed) => parsed,
            Read::Bytes { seq, bytes } => check_read(seq, &bytes)?,
        };
        let seq = parsed.event.seq;
        chain.push(&parsed.event, parsed.at).map_err(|why| corrupt(seq, why))?;
        each(parsed.event)
    };
    let (first, over) = read_batch(&mut stored, true);
    if over {
        for read in first {
            if step(read)?.is_break() {
                break;
            }
        }
        return Ok(());
    }
    let queued = AtomicUsize::new(0);
    std::thread::scope(|threads| {
        let (to_check, read) = sync_channel(BATCHES_AHEAD);
        let queued = &queued;
        threads.spawn(move || read_ahead(stored, to_check, queued));
        // Returning drops the receiver: the reading thread stops at its next batch.
        let taken = read.into_iter().inspect(|_| {
            queued.fetch_sub(1, Ordering::Relaxed);
        });
        for batch in std::iter::once(first).chain(taken) {
            for read in batch {
                if step(read)?.is_break() {
                    return Ok(());
                }
            }
        }
        Ok(())
    })
}

/// What `verify --snapshots` found for one game's snapshots.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SnapshotsChecked {
    /// Snapshots kept for the game.
    pub kept: u64,
    /// Snapshots that check out and hold exactly the fold from seq 0.
    pub agree: u64,
    /// Snapshots no reader trusts (torn, damaged, stale, of another format
    /// or ruleset version, past the head), and why: folds pass over them.
    pub ignored: Vec<(u64, String)>,
}

/// Verifies a stored game as `verify` does (from seq 0, no snapshot used)
/// and compares each snapshot kept for it with the fold at its seq. A
/// snapshot that checks out (checksum, format, ruleset, the hash of the
/// event it follows) but holds another state would give wrong answers: the
/// record is then reported broken at that seq.
pub fn verify_snapshots(store: &dyn Store, game: &str) -> Result<(Verified, SnapshotsChecked), RecordError> {
    let seqs = store.snapshot_seqs(game)?;
    let stored = StoredGame::new(store, game);
    let source = NoSnapshots(&stored);
    let mut checked = SnapshotsChecked { kept: seqs.len() as u64, ..Default::default() };
    let mut wanted = seqs.iter().copied().peekable();
    let mut folder = Folder::new();
    let mut prev: Option<Link> = None;
    for event in source.events_from(0) {
        let event = event?;
        let at = prev.as_ref().map_or(0, |p| p.seq + 1);
        check_link(&event, prev.as_ref()).map_err(|why| RecordError::Broken { seq: at, why: why.to_string() })?;
        folder.push(&event, &source).map_err(|e| broken(e, "the event is not legal"))?;
        while let Some(seq) = wanted.next_if(|s| *s <= event.seq) {
            let bytes = match store.snapshot(game, seq)? {
                Some((s, bytes)) if s == seq => bytes,
                _ => continue,
            };
            match Folder::from_snapshot(&bytes, seq, &event.hash) {
                Err(why) => checked.ignored.push((seq, why)),
                Ok(kept) if kept == folder => checked.agree += 1,
                Ok(_) => {
                    return Err(RecordError::Broken {
                        seq,
                        why:
                            "the snapshot after this event checks out but holds another state than the fold from seq 0"
                                .into(),
                    });
                }
            }
        }
        prev = Some(event.link());
    }
    let Some(head) = prev else {
        return Err(RecordError::Broken { seq: 0, why: "the record is empty".into() });
    };
    checked.ignored.extend(wanted.map(|s| (s, "it follows no stored event (past the head)".to_string())));
    let rewound = folder.rewound().to_vec();
    Ok((Verified { events: head.seq + 1, head: head.hash, rewound }, checked))
}

/// Reads an export (JSON Lines, one event per line), each event checked on
/// its own (strict JSON, hash); `verify` checks the chain and the rules.
pub fn read_export(reader: impl BufRead) -> impl Iterator<Item = Result<Event, RecordError>> {
    let mut lines = reader.split(b'\n').enumerate();
    let mut count: u64 = 0;
    std::iter::from_fn(move || {
        let (n, line) = lines.next()?;
        let line_no = n as u64 + 1;
        let seq = count;
        let broken = move |why: String| RecordError::Broken { seq, why: format!("line {line_no}: {why}") };
        let line = match line {
            Ok(l) => l,
            Err(e) => {
                return Some(Err(RecordError::Io(format!("cannot read line {line_no}: {e}"))));
            }
        };
        if line.len() > MAX_LINE_BYTES {
            return Some(Err(broken(format!("line longer than {MAX_LINE_BYTES} bytes"))));
        }
        if count >= MAX_STREAM_EVENTS {
            return Some(Err(broken(EventError::StreamFull.to_string())));
        }
        let text = match std::str::from_utf8(&line) {
            Ok(t) => t,
            Err(_) => return Some(Err(broken("not UTF-8".into()))),
        };
        if text.trim().is_empty() {
            return Some(Err(broken("empty line".into())));
        }
        count += 1;
        // An exported line is exactly the canonical JSON of its event, so any
        // changed byte, even white space, is found.
        Some(match decode(text) {
            Ok((event, bytes)) if bytes == line => Ok(event),
            Ok(_) => Err(broken("not the canonical JSON of the event (was the file reformatted?)".into())),
            Err(why) => Err(broken(why.to_string())),
        })
    })
}

/// Imports a verified export as a new game: everything is checked before
/// anything is stored; snapshots are kept as appends keep them.
pub fn import(store: &dyn Store, game: &str, events: Vec<Event>) -> Result<Verified, RecordError> {
    import_from(store, game, &events, SNAPSHOT_EVERY)
}

/// Events stored by one durable write of an import, as `append -` stores
/// them: memory holds one such batch, not the whole export. Measured on an
/// import of 1,000,000 events: held whole, 5.6 GiB of peak RSS; in batches
/// of 10,000, 490 MiB (sled's, under writes that large); of 1,000, 140 MiB.
const IMPORT_BATCH: u64 = MAX_BATCH_EVENTS as u64;

/// Imports the events `source` gives (read twice: an export file is not
/// held in memory) as the new game `game`, keeping a snapshot every `every`
/// events as appends would have left them (`Recorder::load_with`).
///
/// 1. The source is verified whole (hashes, links, rules): a bad export
///    stores nothing.
/// 2. It is read again and stored in batches of `IMPORT_BATCH` events, each
///    one durable write. Before a batch is stored, its last event's hash
///    must be the one step 1 verified at its seq: the hash chain then makes
///    every event up to it the one verified (a file changed between the
///    two reads stops the import there). An export of up to `IMPORT_BATCH`
///    events is stored all or nothing; a longer one cut short by the
///    machine (a full disk, a lost database) leaves a prefix of the game
///    stored, each event of it verified.
/// 3. The stored game is verified again, from the store, and its snapshots
///    written on the way (`verify_keeping_snapshots`). (Its head may be
///    past the export's by then: a server on the same database may append
///    to it as soon as it exists.)
pub fn import_from<S>(store: &dyn Store, game: &str, source: &S, every: u64) -> Result<Verified, RecordError>
where
    S: Source + ?Sized,
    S::Error: Into<RecordError>,
{
    check_game_name(game).map_err(RecordError::Input)?;
    if store.head(game)?.is_some() {
        return Err(RecordError::Exists(game.to_string()));
    }
    let mut marks = Vec::new();
    let (verified, _) = verify_each(&NoSnapshots(source), Folder::new(), None, None, |event, _| {
        if (event.seq + 1).is_multiple_of(IMPORT_BATCH) {
            marks.push(event.hash.clone());
        }
    })?;
    let mut batch: Vec<(Event, Vec<u8>)> = Vec::new();
    let store_batch = |batch: &mut Vec<(Event, Vec<u8>)>| -> Result<(), RecordError> {
        let Some((last, _)) = batch.last() else { return Ok(()) };
        let verified_hash = match (last.seq + 1) / IMPORT_BATCH {
            k if (last.seq + 1).is_multiple_of(IMPORT_BATCH) => marks.get(k as usize - 1),
            _ if last.seq + 1 == verified.events => Some(&verified.head),
            _ => None,
        };
        if verified_hash != Some(&last.hash) {
            return Err(RecordError::Broken {
                seq: last.seq,
                why: "the export changed while it was imported: this is not the event verified".into(),
            });
        }
        store.append_batch(game, batch)?;
        batch.clear();
        Ok(())
    };
    for event in source.events_from(0) {
        let event = event.map_err(Into::into)?;
        if event.seq >= verified.events {
            break;
        }
        let bytes = canonical_bytes(&event);
        batch.push((event, bytes));
        if batch.len() as u64 == IMPORT_BATCH {
            store_batch(&mut batch)?;
        }
    }
    store_batch(&mut batch)?;
    verify_keeping_snapshots(store, game, every)?;
    Ok(verified)
}

/// Verifies a stored game as `verify` does (from seq 0, no snapshot read)
/// and keeps its snapshots on the way: every `every` events, those that
/// appends would have left (`append::kept_after`: the two latest and the
/// sparse ones), each written over whatever is kept at its seq. For a game
/// stored whole (an import, a copy), whose appends kept none. A snapshot
/// that cannot be written is a cache missed: reads are slower, not wrong.
pub fn verify_keeping_snapshots(store: &dyn Store, game: &str, every: u64) -> Result<Verified, RecordError> {
    let head = store.head(game)?.ok_or_else(|| RecordError::NoSuchGame(game.to_string()))?;
    let stored = StoredGame::new(store, game);
    let (verified, _) = verify_each(&NoSnapshots(&stored), Folder::new(), None, None, |event, folder| {
        if kept_after(event.seq, head.seq, every) {
            let _ = store.put_snapshot(game, event.seq, &folder.snapshot(&event.hash));
        }
    })?;
    Ok(verified)
}
