//! `arbiter copy --from DIR --to postgres://...`: a whole tournament moved
//! from one store to another (any backend to any other), checked on both
//! sides.
//!
//! The events are appended to the target in the order of the source's
//! verifiable log (leaf 0, 1, 2, ...), not game by game, so the target's log
//! is the same tree: every checkpoint the source signed is a checkpoint of
//! the target too, and is copied with the log's key. A player's bundle
//! proved against the old store still proves against the new one.
//!
//! Steps, each stopping at the first problem with the target as it is:
//! 1. every game of the source verifies (hashes, links, rules);
//! 2. the target holds nothing, or a prefix of the source's log (a copy
//!    cut short is resumed: its root at its size must be the source's);
//! 3. the events, in log order (a run of one game's leaves is one batch),
//!    then the settings (tokens, read access, the log's key), then the
//!    checkpoints the target does not have yet;
//! 4. every game of the target verifies and has the source's head, the
//!    two logs have one size and one root, and the target passes the
//!    check every open makes against its newest checkpoint.
//!
//! Snapshots are a cache and are not copied: the target's are written as
//! step 4 folds each game, those its appends would have left
//! (`record::verify_keeping_snapshots`), so that a long game reads as fast
//! there as it did in the source.

use crate::limits::SNAPSHOT_EVERY;
use crate::record::{StoredGame, verify, verify_keeping_snapshots};
use crate::store::{LogNodes, Store, checkpoints};
use crate::tlog::merkle::root;

/// Events per batch at most (one transaction on PostgreSQL).
const BATCH: usize = 512;

/// How long the copy waits for the target's log to hold every event.
const CATCH_UP: std::time::Duration = std::time::Duration::from_secs(60);

/// What a copy did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Copied {
    pub games: usize,
    /// Events appended now (a resumed copy: only the rest).
    pub events: u64,
    /// Events the target held before (a resumed copy).
    pub already: u64,
    pub settings: usize,
    pub checkpoints: usize,
    /// The log's size and root (base64), the same on both sides.
    pub size: u64,
    pub root: String,
}

/// Copies everything `from` holds into `to`. `key` is the source's log
/// key (its text, `checkpoints::kept_key`) when it is kept with the store, for the
/// target to keep signing as the same log; `progress` is told each event
/// copied.
pub fn copy(
    from: &dyn Store,
    to: &dyn Store,
    key: Option<&str>,
    mut progress: impl FnMut(u64),
) -> Result<Copied, String> {
    // 1. The source verifies.
    let games = from.games().map_err(|e| format!("cannot list the source's games: {e}"))?;
    for game in &games {
        verify(&StoredGame::new(from, game), None)
            .map_err(|e| format!("the source's game {game} does not verify: {e}"))?;
    }
    // 2. The target is empty or a prefix of the source's log.
    let size = from.log_size().map_err(|e| format!("the source's log: {e}"))?;
    let already = to.log_size().map_err(|e| format!("the target's log: {e}"))?;
    if already > size {
        return Err(format!(
            "the target's log holds {already} events, more than the source's {size}: not a copy of it"
        ));
    }
    if already > 0 {
        let theirs = root(&LogNodes(to), already).map_err(|e| format!("the target's log: {e}"))?;
        let ours = root(&LogNodes(from), already).map_err(|e| format!("the source's log: {e}"))?;
        if theirs != ours {
            return Err(format!(
                "the target holds {already} events that are not the first {already} of the source's log: copy into an empty store"
            ));
        }
    }
    // 3. The events in log order, in runs of one game.
    let mut run: Vec<(crate::event::Event, Vec<u8>)> = Vec::new();
    let mut run_game = String::new();
    let flush = |game: &str, run: &mut Vec<(crate::event::Event, Vec<u8>)>| -> Result<(), String> {
        if !run.is_empty() {
            to.append_batch(game, run).map_err(|e| format!("the target refused {game} seq {}: {e}", run[0].0.seq))?;
            run.clear();
        }
        Ok(())
    };
    for index in already..size {
        let (game, seq) = from
            .log_leaf(index)
            .map_err(|e| format!("the source's log: {e}"))?
            .ok_or_else(|| format!("the source's log has no leaf {index}"))?;
        if game != run_game || run.len() == BATCH {
            flush(&run_game, &mut run)?;
            run_game = game.clone();
        }
        let event = from
            .get(&game, seq)
            .map_err(|e| format!("the source's {game} seq {seq}: {e}"))?
            .ok_or_else(|| format!("the source's log names {game} seq {seq}, which it does not hold"))?;
        let bytes = crate::event::canonical_bytes(&event);
        run.push((event, bytes));
        progress(1);
    }
    flush(&run_game, &mut run)?;
    // The settings: tokens, read access; and the log's key, where the
    // target keeps it (sled's in DATA/log.key, a database's in a setting).
    let settings: Vec<(String, Vec<u8>)> = from
        .settings("")
        .map_err(|e| format!("the source's settings: {e}"))?
        .into_iter()
        // The key goes where the target keeps keys (below); the newest
        // checkpoint's size is written by `keep_checkpoint` with each one
        // (copied ahead of its checkpoints, a copy cut short between them
        // would leave a store whose open refuses it).
        .filter(|(k, _)| k != checkpoints::KEY_SETTING && k != checkpoints::SIGNED_SETTING)
        .collect();
    for (k, v) in &settings {
        to.put_setting(k, v).map_err(|e| format!("the target refused the setting {k}: {e}"))?;
    }
    if let Some(key) = key {
        keep_key(to, key)?;
    }
    // The target's log must hold every event before a checkpoint of it is
    // kept there (PostgreSQL gives positions just after the commits, and
    // later while a transaction elsewhere on its cluster stays open).
    let caught_up = std::time::Instant::now() + CATCH_UP;
    while to.log_size().map_err(|e| format!("the target's log: {e}"))? < size {
        if std::time::Instant::now() > caught_up {
            return Err(format!(
                "the target's log has not reached {size} events after {}s (a transaction left open on its database?): run the copy again to resume",
                CATCH_UP.as_secs()
            ));
        }
    }
    let signed = from.checkpoints().map_err(|e| e.to_string())?;
    let kept = to.checkpoints().map_err(|e| e.to_string())?;
    if kept.len() > signed.len() || signed[..kept.len()] != kept[..] {
        return Err("the target has checkpoints the source does not: not a copy of it".into());
    }
    for record in &signed[kept.len()..] {
        to.keep_checkpoint(record).map_err(|e| e.to_string())?;
    }
    // 4. The target verifies, game by game and as a log.
    let copied = to.games().map_err(|e| format!("cannot list the target's games: {e}"))?;
    if copied != games {
        return Err(format!("the target holds the games {copied:?}, the source {games:?}"));
    }
    for game in &games {
        let v = verify_keeping_snapshots(to, game, SNAPSHOT_EVERY)
            .map_err(|e| format!("the target's game {game} does not verify: {e}"))?;
        let head = from.head(game).map_err(|e| e.to_string())?.map(|h| h.hash);
        if Some(&v.head) != head.as_ref() {
            return Err(format!("the target's game {game} ends at {}, the source's at {head:?}", v.head));
        }
    }
    let (ours, theirs) = (
        root(&LogNodes(from), size).map_err(|e| e.to_string())?,
        root(&LogNodes(to), to.log_size().map_err(|e| e.to_string())?).map_err(|e| e.to_string())?,
    );
    if ours != theirs {
        return Err("the two logs differ after the copy".into());
    }
    checkpoints::check(to).map_err(|e| format!("the target fails its open's check: {e}"))?;
    Ok(Copied {
        games: games.len(),
        events: size - already,
        already,
        settings: settings.len(),
        checkpoints: signed.len() - kept.len(),
        size,
        root: crate::tlog::note::b64(&ours),
    })
}

/// Keeps `key` with `store` unless it has one: then it must be the same.
fn keep_key(store: &dyn Store, key: &str) -> Result<(), String> {
    match (checkpoints::kept_key(store).map_err(|e| e.to_string())?, store.home()) {
        (Some(theirs), _) if theirs == key => Ok(()),
        (Some(_), _) => Err("the target already has another log key".into()),
        (None, Some(dir)) => {
            checkpoints::write_private_key(&dir.join(checkpoints::KEY_FILE), key).map_err(|e| e.to_string())
        }
        (None, None) => store.put_setting(checkpoints::KEY_SETTING, key.as_bytes()).map_err(|e| e.to_string()),
    }
}
