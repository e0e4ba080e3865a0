//! The answers the CLI and the server share. Each operation returns the
//! JSON that `arbiter VERB --json` prints and that the HTTP API sends, so
//! a game read through the server and through the store looks the same,
//! and the CLI renders either with one function.

use serde_json::{Value, json};

use crate::event::{Event, Header};
use crate::fold::Source;
use crate::fold::{FoldError, fold_to};
use crate::kernel::{Move, View};
use crate::record::{self, Appended, RecordError, Recorder, StoredGame, verify};
use crate::rules::Table;
use crate::store::Store;

/// `new`: the game's event 0.
pub fn create(store: &dyn Store, game: &str, header: &Header, by: &str) -> Result<Value, RecordError> {
    let event = record::create(store, game, header, by, None)?;
    Ok(json!(event))
}

/// `append`: the stored event, whether it was a retry, and where the game is now.
pub fn appended(done: &Appended, view: &View) -> Value {
    json!({"event": done.event, "duplicate": done.duplicate, "view": view, "may_act_names": done.may_act_names})
}

/// `head`: the last event's seq, hash and time.
pub fn head(store: &dyn Store, game: &str) -> Result<Value, RecordError> {
    let head = store.head(game)?.ok_or_else(|| RecordError::NoSuchGame(game.to_string()))?;
    Ok(json!({"seq": head.seq, "hash": head.hash, "at": head.at}))
}

/// The game's table after `at` (default: the head), with that event's seq and hash.
fn table_at(store: &dyn Store, game: &str, at: Option<u64>) -> Result<(Table, u64, String), RecordError> {
    match at {
        None => {
            let r = Recorder::load(store, game)?;
            Ok((r.table().clone(), r.head().seq, r.head().hash.clone()))
        }
        Some(at) => {
            let head = store.head(game)?.ok_or_else(|| RecordError::NoSuchGame(game.to_string()))?;
            if at > head.seq {
                return Err(RecordError::Input(format!("seq {at} is past the head of {game} (seq {})", head.seq)));
            }
            let folder = fold_to(&StoredGame::new(store, game), at).map_err(|e| match e {
                FoldError::Illegal { seq, violation } => RecordError::Broken { seq, why: violation.to_string() },
                FoldError::Source(e) => e,
            })?;
            let event = store.get(game, at)?.ok_or_else(|| RecordError::Io(format!("seq {at} is missing")))?;
            Ok((folder.table().expect("a folded game has a state").clone(), at, event.hash))
        }
    }
}

/// `state`: where the game is after `at` (default: the head), and the ruleset's state.
pub fn state(store: &dyn Store, game: &str, at: Option<u64>) -> Result<Value, RecordError> {
    let (table, seq, hash) = table_at(store, game, at)?;
    let view = table.view();
    // The adjudication (judges as they stand, penalties, notes) is shown
    // beside the combat: it stands across rewinds, which return the combat only.
    Ok(json!({"game": game, "seq": seq, "hash": hash, "ruleset": table.header.ruleset, "header": table.header,
        "step": view.step, "may_act": view.may_act, "legal": view.legal, "awaiting_ruling": view.awaiting_ruling,
        "priority": table.priority(), "judges": table.header.judges, "penalties": table.penalties, "rulings": table.rulings,
        "notes": table.notes, "board": table.board(), "state": table.state}))
}

/// `moves`: what each seat and judge (or only `actor`) may record after
/// `at` (default: the head), as `{"game", "seq", "hash", "seats", "step",
/// "may_act", "awaiting_ruling", "moves"}`: `seq` is
/// the event the moves follow, so an append made from one expects `seq + 1`.
pub fn moves(store: &dyn Store, game: &str, at: Option<u64>, actor: Option<&str>) -> Result<Value, RecordError> {
    let (table, seq, hash) = table_at(store, game, at)?;
    if let Some(a) = actor.filter(|a| !table.header.is_seat(a) && !table.header.is_judge(a)) {
        let mut known = table.header.seat_ids();
        known.extend(table.header.judges.iter().cloned());
        return Err(RecordError::Input(format!("{a} is not a seat or judge of {game}; they are {}", known.join(", "))));
    }
    let moves: Vec<Move> = table.moves(seq + 1).into_iter().filter(|m| actor.is_none_or(|a| m.seat == a)).collect();
    let view = table.view();
    Ok(json!({"game": game, "seq": seq, "hash": hash, "seats": table.header.seats, "step": view.step,
        "may_act": view.may_act, "awaiting_ruling": view.awaiting_ruling, "moves": moves}))
}

/// `verify GAME`: hashes, links and a full re-fold, optionally to an expected head.
pub fn verify_game(store: &dyn Store, game: &str, head: Option<&str>) -> Result<Value, RecordError> {
    verify_source(&StoredGame::new(store, game), game, head)
}

/// `verify` of `game` read through any source (the CLI's reads its progress through one).
pub fn verify_source<S>(source: &S, game: &str, head: Option<&str>) -> Result<Value, RecordError>
where
    S: Source + ?Sized,
    S::Error: Into<RecordError>,
{
    let (verified, _) = verify(source, head)?;
    Ok(json!({"game": game, "ok": true, "events": verified.events, "head": verified.head, "rewound": verified.rewound}))
}

/// `verify GAME --snapshots`: `verify`, and each snapshot kept for the game
/// compared with the fold from seq 0 at its seq.
pub fn verify_snapshots(store: &dyn Store, game: &str) -> Result<Value, RecordError> {
    let (verified, snapshots) = record::verify_snapshots(store, game)?;
    Ok(json!({"game": game, "ok": true, "events": verified.events, "head": verified.head,
        "rewound": verified.rewound, "snapshots": snapshots}))
}

/// `import`: a verified export stored as a new game.
pub fn import(store: &dyn Store, game: &str, events: Vec<Event>) -> Result<Value, RecordError> {
    let verified = record::import(store, game, events)?;
    Ok(json!({"game": game, "events": verified.events, "head": verified.head}))
}

/// `import` of an export read from `source` (twice, never held whole in
/// memory: `record::import_from`).
pub fn import_from<S>(store: &dyn Store, game: &str, source: &S) -> Result<Value, RecordError>
where
    S: crate::fold::Source + ?Sized,
    S::Error: Into<RecordError>,
{
    let verified = record::import_from(store, game, source, crate::limits::SNAPSHOT_EVERY)?;
    Ok(json!({"game": game, "events": verified.events, "head": verified.head}))
}

/// `fork`: a new game sharing events 0..=at of `from`.
pub fn fork(store: &dyn Store, from: &str, at: u64, game: &str) -> Result<Value, RecordError> {
    let v = crate::compare::fork(store, from, at, game)?;
    Ok(json!({"game": game, "from": from, "at": at, "events": v.events, "head": v.head}))
}

/// `{"seq", "hash"}` of an event of the game (default: the head), as a ruling or note names it.
pub fn concerns(store: &dyn Store, game: &str, seq: Option<u64>) -> Result<Value, RecordError> {
    let head = store.head(game)?.ok_or_else(|| RecordError::NoSuchGame(game.into()))?;
    let seq = seq.unwrap_or(head.seq);
    let event = store
        .get(game, seq)?
        .ok_or_else(|| RecordError::Input(format!("seq {seq} is past the head of {game} (seq {})", head.seq)))?;
    Ok(json!({"seq": seq, "hash": event.hash}))
}
