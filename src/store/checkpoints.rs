//! Checkpoints of a store's log, signed, kept with the store
//! (`Store::checkpoints`): a sled store's beside its database files, a
//! PostgreSQL store's in its `checkpoints` table, one record per row.
//!
//! `DATA/checkpoints` is an append-only file of JSON Lines, one signed
//! checkpoint each, fsynced before it counts:
//!
//! ```text
//! {"heads":{"t2":[116,"<blake3 of seq 116>"]},"note":"arbiter/open\n412\n<root>\n\n— arbiter/open <sig>\n"}
//! ```
//!
//! `heads` holds the last event of each game that grew since the line
//! before, so the file alone says what every game held at each checkpoint.
//! The private key that signs them is `DATA/log.key` (a PostgreSQL store's:
//! its setting `log/key`, shared by every server on the database) unless
//! the organiser keeps it elsewhere (`--log-key`).
//!
//! Every open of a store runs `check`: the store must still hold every
//! event its newest checkpoint covers, with the same root. A store that sled
//! recovered short (a damaged file it truncated) or one rewritten since then
//! fails loudly, naming the games and events lost. A torn last line (a
//! crash while writing it) is ignored: that checkpoint was never
//! acknowledged. The size of the newest checkpoint is also kept in the
//! store itself, so a checkpoint file deleted or cut short is found too.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{AppendError, LeafRead, LogNodes, OpenError, ReadError, Store};
use crate::tlog::merkle::root;
use crate::tlog::note::{Checkpoint, NoteError, NoteSigner, b64};

/// The file of checkpoints, in the store's directory.
pub const CHECKPOINT_FILE: &str = "checkpoints";
/// The default place of the log's private key.
pub const KEY_FILE: &str = "log.key";
/// The store's own record of its newest checkpoint's tree size (a setting).
pub const SIGNED_SETTING: &str = "log/checkpoint";
/// A store without a directory (PostgreSQL): its log's private key.
pub const KEY_SETTING: &str = "log/key";

/// One line of the checkpoint file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    /// Each game that grew since the line before: its last seq and hash.
    pub heads: BTreeMap<String, (u64, String)>,
    /// The signed note.
    pub note: String,
}

impl Record {
    pub fn checkpoint(&self) -> Result<Checkpoint, NoteError> {
        crate::tlog::note::checkpoint_of(&self.note)
    }
}

/// Why the checkpoints kept with a store could not be read (`read`,
/// `Store::checkpoints`).
#[derive(Debug, thiserror::Error)]
pub enum CheckpointsError {
    #[error("cannot read {path}: {why}")]
    Io { path: String, why: std::io::Error },
    #[error("{path} line {line} is damaged: {why}")]
    DamagedLine { path: String, line: usize, why: serde_json::Error },
    #[error("cannot read the checkpoints: {0}")]
    Database(String),
    #[error("{place} row {row} is damaged: {why}")]
    DamagedRow { place: String, row: i64, why: serde_json::Error },
}

/// Why a signed checkpoint was not kept (`Store::keep_checkpoint`).
#[derive(Debug, thiserror::Error)]
pub enum KeepError {
    #[error("{0}")]
    Note(#[from] NoteError),
    #[error("{0}")]
    Encode(#[from] serde_json::Error),
    #[error("cannot open {path}: {why}")]
    Open { path: String, why: std::io::Error },
    #[error("cannot write {path}: {why}")]
    Write { path: String, why: std::io::Error },
    #[error("checkpoint {size} is signed and in {place}, but the store could not record its size: {why}")]
    SizeNotRecorded { size: u64, place: String, why: AppendError },
    #[error("cannot keep the checkpoint: {0}")]
    Database(String),
}

/// Why the log's private key could not be had (`signer`, `kept_key`,
/// `write_private_key`).
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("{shown}: {why}")]
    Parse { shown: String, why: NoteError },
    #[error(
        "the log key {shown} signs for {name:?}, not {origin:?}: a log keeps its origin (use another store for another log)"
    )]
    OtherOrigin { shown: String, name: String, origin: String },
    #[error("the log key {path} does not exist, but this store's log is already signed: give the key that signs it")]
    Missing { path: String },
    #[error("{shown} is missing, but this store's log is already signed: give its key with --log-key")]
    SettingMissing { shown: String },
    #[error("the log key vanished")]
    Vanished,
    #[error("{shown} is not text")]
    NotText { shown: String },
    #[error("cannot read the log key {path}: {why}")]
    Read { path: String, why: std::io::Error },
    #[error("cannot create the log key {path}: {why}")]
    Create { path: String, why: std::io::Error },
    #[error("cannot write the log key {path}: {why}")]
    Write { path: String, why: std::io::Error },
    #[error("no randomness for a new key: {0}")]
    NoRandomness(getrandom::Error),
    #[error("{0}")]
    Note(#[from] NoteError),
    #[error("{0}")]
    Checkpoints(#[from] CheckpointsError),
    #[error("{0}")]
    Store(#[from] ReadError),
    #[error("{0}")]
    Setting(#[from] AppendError),
}

/// Why no checkpoint was signed (`sign`, `sign_after`).
#[derive(Debug, thiserror::Error)]
pub enum SignError {
    #[error("{0}")]
    Checkpoints(#[from] CheckpointsError),
    #[error("{0}")]
    Note(#[from] NoteError),
    #[error("{0}")]
    Read(#[from] ReadError),
    /// The log names what the store does not hold.
    #[error("{0}")]
    Broken(String),
    #[error("{0}")]
    Keep(#[from] KeepError),
}

/// Why the whole log did not verify (`verify_log`).
#[derive(Debug, thiserror::Error)]
pub enum VerifyLogError {
    #[error("{0}")]
    Checkpoints(#[from] CheckpointsError),
    #[error("{place}: {why}")]
    Note { place: String, why: NoteError },
    #[error("{0}")]
    Read(#[from] ReadError),
    /// What the log holds does not add up: which leaf, event or root.
    #[error("{0}")]
    Broken(String),
}

fn file(dir: &Path) -> PathBuf {
    dir.join(CHECKPOINT_FILE)
}

/// Every checkpoint in the file, oldest first (a torn last line is not one).
pub fn read(dir: &Path) -> Result<Vec<Record>, CheckpointsError> {
    let path = file(dir);
    let f = match File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(why) => return Err(CheckpointsError::Io { path: path.display().to_string(), why }),
    };
    let mut records = Vec::new();
    let mut lines = BufReader::new(f).split(b'\n').peekable();
    let mut n = 0;
    while let Some(line) = lines.next() {
        n += 1;
        let line = line.map_err(|why| CheckpointsError::Io { path: path.display().to_string(), why })?;
        match serde_json::from_slice::<Record>(&line) {
            Ok(r) => records.push(r),
            // The last line may be torn by a crash while it was written.
            Err(_) if lines.peek().is_none() => break,
            Err(why) => return Err(CheckpointsError::DamagedLine { path: path.display().to_string(), line: n, why }),
        }
    }
    Ok(records)
}

/// The private key: read from `key` (or `DATA/log.key`, or for a store
/// without a directory its setting `log/key`), or made on first use with
/// `origin` as its name, from 32 bytes of the OS's randomness, and written
/// readable by its owner only (or kept in the setting: of two servers that
/// make one at once, the first kept is the one both sign with).
pub fn signer(store: &dyn Store, key: Option<&Path>, origin: Option<&str>) -> Result<NoteSigner, KeyError> {
    let path = match (key, store.home()) {
        (Some(key), _) => key.to_path_buf(),
        (None, Some(dir)) => dir.join(KEY_FILE),
        (None, None) => return kept_signer(store, origin),
    };
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            let signer =
                NoteSigner::parse(&text).map_err(|why| KeyError::Parse { shown: path.display().to_string(), why })?;
            same_origin(&signer, origin, &path.display().to_string())?;
            Ok(signer)
        }
        // A key given by name (--log-key) that is not there is made only
        // for a log that has none yet: a new key for a signed log would
        // sign it as someone else (its checkpoints would not verify).
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && key.is_some() && !store.checkpoints()?.is_empty() => {
            Err(KeyError::Missing { path: path.display().to_string() })
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let signer = new_signer(store, origin)?;
            write_private_key(&path, &signer.to_text())?;
            Ok(signer)
        }
        Err(why) => Err(KeyError::Read { path: path.display().to_string(), why }),
    }
}

/// The key kept in the store's settings (`KEY_SETTING`), made if none is.
fn kept_signer(store: &dyn Store, origin: Option<&str>) -> Result<NoteSigner, KeyError> {
    let shown = format!("the log key in the setting {KEY_SETTING}");
    let parse = |text: &[u8]| {
        let text = std::str::from_utf8(text).map_err(|_| KeyError::NotText { shown: shown.clone() })?;
        let signer = NoteSigner::parse(text).map_err(|why| KeyError::Parse { shown: shown.clone(), why })?;
        same_origin(&signer, origin, &shown)?;
        Ok(signer)
    };
    if let Some(text) = store.setting(KEY_SETTING)? {
        return parse(&text);
    }
    if !store.checkpoints()?.is_empty() {
        return Err(KeyError::SettingMissing { shown });
    }
    let signer = new_signer(store, origin)?;
    let made = store.swap_setting(KEY_SETTING, None, Some(signer.to_text().as_bytes()))?;
    match made {
        true => Ok(signer),
        false => parse(&store.setting(KEY_SETTING)?.ok_or(KeyError::Vanished)?),
    }
}

/// The log's private key kept with `store`, if it is there: sled's file
/// `DATA/log.key`, a database's setting `log/key` (as `signer` finds it
/// without `--log-key`).
pub fn kept_key(store: &dyn Store) -> Result<Option<String>, KeyError> {
    match store.home() {
        Some(dir) => match std::fs::read_to_string(dir.join(KEY_FILE)) {
            Ok(text) => Ok(Some(text.trim_end().to_string())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(why) => Err(KeyError::Read { path: dir.join(KEY_FILE).display().to_string(), why }),
        },
        None => match store.setting(KEY_SETTING)? {
            Some(text) => String::from_utf8(text)
                .map(Some)
                .map_err(|_| KeyError::NotText { shown: format!("the setting {KEY_SETTING}") }),
            None => Ok(None),
        },
    }
}

/// A log keeps its origin: a key for another name is refused.
fn same_origin(signer: &NoteSigner, origin: Option<&str>, shown: &str) -> Result<(), KeyError> {
    match origin {
        Some(origin) if origin != signer.name => Err(KeyError::OtherOrigin {
            shown: shown.to_string(),
            name: signer.name.clone(),
            origin: origin.to_string(),
        }),
        _ => Ok(()),
    }
}

/// A new key named `origin` (by default `default_origin`).
fn new_signer(store: &dyn Store, origin: Option<&str>) -> Result<NoteSigner, KeyError> {
    let name = match origin {
        Some(o) => o.to_string(),
        None => default_origin(store),
    };
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed).map_err(KeyError::NoRandomness)?;
    Ok(NoteSigner::from_seed(&name, seed)?)
}

/// "localhost/arbiter/<the store directory's name>" (a database's: its
/// name, the last part of its URL).
fn default_origin(store: &dyn Store) -> String {
    let name: String = store.name().chars().filter(|c| c.is_ascii_alphanumeric() || "-_.".contains(*c)).collect();
    format!("localhost/arbiter/{}", if name.is_empty() { "store" } else { &name })
}

/// Writes a private key to a new file readable by its owner only, fsynced.
pub fn write_private_key(path: &Path, text: &str) -> Result<(), KeyError> {
    use std::os::unix::fs::OpenOptionsExt;
    let shown = || path.display().to_string();
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|why| KeyError::Create { path: shown(), why })?;
    f.write_all(format!("{text}\n").as_bytes())
        .and_then(|_| f.sync_all())
        .map_err(|why| KeyError::Write { path: shown(), why })?;
    sync_dir(path);
    Ok(())
}

fn sync_dir(path: &Path) {
    if let Some(parent) = path.parent()
        && let Ok(d) = File::open(if parent.as_os_str().is_empty() { Path::new(".") } else { parent })
    {
        let _ = d.sync_all();
    }
}

/// What `sign` did.
#[derive(Debug, Clone)]
pub struct Signed {
    pub checkpoint: Checkpoint,
    pub note: String,
    /// False when the log had not grown: the newest checkpoint is returned.
    pub new: bool,
}

/// Signs a checkpoint of the store's log as it is now, unless the newest
/// checkpoint already covers it; keeps it with the store (durably) and
/// records its size in the store. The caller holds the store open, so no
/// other process writes it meanwhile; within a process, the caller runs
/// one `sign` at a time.
pub fn sign(store: &dyn Store, signer: &NoteSigner) -> Result<Signed, SignError> {
    let newest = match store.checkpoints()?.pop() {
        Some(r) => Some(Signed { checkpoint: r.checkpoint()?, note: r.note, new: false }),
        None => None,
    };
    sign_after(store, signer, newest.as_ref())
}

/// `sign`, given the newest checkpoint kept (so a server signing every
/// second does not read them all each time).
pub fn sign_after(store: &dyn Store, signer: &NoteSigner, newest: Option<&Signed>) -> Result<Signed, SignError> {
    let last = newest.map(|n| &n.checkpoint);
    let size = store.log_size()?;
    if let Some(newest) = newest
        && newest.checkpoint.size == size
        && newest.checkpoint.origin == signer.name
    {
        return Ok(Signed { new: false, ..newest.clone() });
    }
    let from = last.map_or(0, |c| c.size);
    let mut heads = BTreeMap::new();
    for index in from..size {
        let (game, seq) =
            store.log_leaf(index)?.ok_or_else(|| SignError::Broken(format!("the store's log has no leaf {index}")))?;
        heads.insert(game, seq);
    }
    let mut with_hash = BTreeMap::new();
    for (game, seq) in heads {
        let event = store.get(&game, seq)?.ok_or_else(|| {
            SignError::Broken(format!("the log names {game} seq {seq}, which the store does not hold"))
        })?;
        with_hash.insert(game, (seq, event.hash));
    }
    let checkpoint = Checkpoint { origin: signer.name.clone(), size, root: root(&LogNodes(store), size)? };
    let note = signer.sign(&checkpoint.body());
    let record = Record { heads: with_hash, note: note.clone() };
    // Not kept: another server on the same database kept a larger one
    // meanwhile. This one is still a valid signed checkpoint of the log.
    let new = store.keep_checkpoint(&record)?;
    Ok(Signed { checkpoint, note, new })
}

/// Appends one line and fsyncs it (and the directory when the file is new).
pub(crate) fn append(dir: &Path, record: &Record) -> Result<(), KeepError> {
    let path = file(dir);
    let created = !path.exists();
    let mut line = serde_json::to_vec(record)?;
    line.push(b'\n');
    let mut f = OpenOptions::new()
        .append(true)
        .create(true)
        .open(&path)
        .map_err(|why| KeepError::Open { path: path.display().to_string(), why })?;
    f.write_all(&line)
        .and_then(|_| f.sync_data())
        .map_err(|why| KeepError::Write { path: path.display().to_string(), why })?;
    if created {
        sync_dir(&path);
    }
    Ok(())
}

/// Checks the store against its newest checkpoint: every game holds at
/// least the events it held then, with the same hashes, and the log's root
/// at that size is the signed one. Cost: one read of the checkpoints,
/// one lookup per game named in them, and O(log n) subtrees.
pub fn check(store: &dyn Store) -> Result<(), OpenError> {
    let lost = |why: String| OpenError::Lost(why);
    let records = store.checkpoints().map_err(|e| lost(e.to_string()))?;
    let place = store.checkpoints_place();
    let signed = match store.setting(SIGNED_SETTING) {
        Ok(Some(v)) => v.as_slice().try_into().ok().map(u64::from_be_bytes),
        _ => None,
    };
    let Some(newest) = records.last() else {
        return match signed {
            Some(n) => {
                Err(lost(format!("{place} is missing, but this store signed checkpoint {n}: it cannot be checked")))
            }
            None => Ok(()),
        };
    };
    let checkpoint = newest.checkpoint().map_err(|e| lost(format!("{place}: {e}")))?;
    if let Some(n) = signed
        && n > checkpoint.size
    {
        return Err(lost(more_signed_than_kept(store, &records, &place, checkpoint.size, n)));
    }
    // What each game held at the newest checkpoint.
    let mut heads: BTreeMap<&str, &(u64, String)> = BTreeMap::new();
    for r in &records {
        for (game, head) in &r.heads {
            heads.insert(game, head);
        }
    }
    let since = format!("since checkpoint {}", checkpoint.size);
    let mut missing = Vec::new();
    let mut changed = Vec::new();
    for (game, (seq, hash)) in heads {
        let io = |e: ReadError| lost(format!("cannot check game {game} against checkpoint: {e}"));
        match store.head(game).map_err(io)? {
            None => missing.push(format!("events 0..{seq} of game {game}")),
            Some(h) if h.seq < *seq => missing.push(format!("events {}..{seq} of game {game}", h.seq + 1)),
            Some(_) => match store.get(game, *seq).map_err(io)? {
                Some(e) if e.hash == *hash => {}
                _ => changed.push(format!("event {seq} of game {game}")),
            },
        }
    }
    let size = store.log_size().map_err(|e| lost(e.to_string()))?;
    if !missing.is_empty() || size < checkpoint.size {
        let what = if missing.is_empty() {
            format!("log positions {size}..{}", checkpoint.size - 1)
        } else {
            missing.join(", ")
        };
        return Err(lost(format!(
            "the store has lost {what} {since} (the log held {} events then; the store holds {size}); restore it from a backup, or from exports and bundles",
            checkpoint.size
        )));
    }
    if !changed.is_empty() {
        return Err(lost(format!("the store's {} differ from what it held {since}", changed.join(", "))));
    }
    let now = root(&LogNodes(store), checkpoint.size).map_err(|e| lost(format!("{e} ({since})")))?;
    if now != checkpoint.root {
        return Err(lost(format!(
            "the store's log differs from checkpoint {}: its root is {}, the signed root {}; events stored before it were changed",
            checkpoint.size,
            b64(&now),
            b64(&checkpoint.root)
        )));
    }
    Ok(())
}

/// The store's own record says it signed checkpoint `n`, past the newest
/// one kept in `place` (`size`): either checkpoints were removed from
/// `place`, or the store's database is not the one they were signed for (a
/// swapped sled `db`, another store's or a copy from another time). Which:
/// whether it holds each game's event at the newest checkpoint with the
/// hash signed there.
fn more_signed_than_kept(store: &dyn Store, records: &[Record], place: &str, size: u64, n: u64) -> String {
    let mut heads: BTreeMap<&str, &(u64, String)> = BTreeMap::new();
    for r in records {
        for (game, head) in &r.heads {
            heads.insert(game, head);
        }
    }
    let mut differ = Vec::new();
    for (game, (seq, hash)) in heads {
        match store.get(game, *seq) {
            Ok(Some(e)) if e.hash == *hash => {}
            Ok(Some(e)) => differ.push(format!("{game} seq {seq} has hash {}, not the signed {hash}", e.hash)),
            Ok(None) => differ.push(format!("it has no {game} seq {seq}")),
            Err(e) => differ.push(format!("{game} seq {seq} cannot be read ({e})")),
        }
    }
    let held = store.log_size().map_or_else(|e| format!("cannot be read ({e})"), |s| format!("holds {s} events"));
    if differ.is_empty() {
        format!(
            "{place} ends at checkpoint {size}, but the store's database records that it signed checkpoint {n} (its log {held}), and it holds every event checkpoint {size} signed: checkpoints were removed from {place}; put back the file from a backup"
        )
    } else {
        format!(
            "the store's database is not the one {place} was signed for: it records that it signed checkpoint {n} (its log {held}), but {place} ends at checkpoint {size}, and {}; the database was replaced (another store's, or a copy from another time): restore the store from a backup, or from exports and bundles",
            differ.join(", ")
        )
    }
}

/// Events of a game stored after the newest checkpoint: acknowledged (an
/// append is acknowledged once durable, and signed after), in no signed
/// checkpoint yet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unsigned {
    pub game: String,
    pub from: u64,
    pub to: u64,
}

/// Each of `games` whose head is past what the checkpoints kept with the
/// store signed of it (none signed: from event 0). Cost: one read of the
/// checkpoints and one head per game.
pub fn unsigned(store: &dyn Store, games: &[String]) -> Result<Vec<Unsigned>, ReadError> {
    let records = store.checkpoints().map_err(|e| ReadError::Io(e.to_string()))?;
    let mut signed: BTreeMap<&str, u64> = BTreeMap::new();
    for r in &records {
        for (game, (seq, _)) in &r.heads {
            signed.insert(game, *seq);
        }
    }
    let mut out = Vec::new();
    for game in games {
        let Some(head) = store.head(game)? else { continue };
        let from = signed.get(game.as_str()).map_or(0, |s| s + 1);
        if head.seq >= from {
            out.push(Unsigned { game: game.clone(), from, to: head.seq });
        }
    }
    Ok(out)
}

/// Why no checkpoint covers what a verb just stored (`sign_after_write`).
#[derive(Debug, thiserror::Error)]
pub enum NotSigned {
    #[error("no checkpoint was signed: the store could not be opened again to sign what is durable: {0}")]
    Reopen(OpenError),
    #[error("no checkpoint was signed: {0}")]
    Key(KeyError),
    #[error("no checkpoint was signed: {0}")]
    Sign(SignError),
    /// The checkpoint was kept but could not be recorded: `sign` says so.
    #[error("{0}")]
    Unrecorded(SignError),
}

/// Signs a checkpoint of everything a local verb stored, before the verb
/// returns, even when the verb failed part way: a store must never lose
/// silently what it acknowledged. After a failed write (a full disk), sled
/// holds in memory more than is durable, so the store is closed and opened
/// again, and what it holds then is signed. `key` and `origin` are as for
/// `signer`.
pub fn sign_after_write(store: Box<dyn Store>, key: Option<&Path>, origin: Option<&str>) -> Result<(), NotSigned> {
    let store = match (store.failed(), store.home().map(Path::to_path_buf)) {
        (Some(_), Some(dir)) => {
            store.close();
            Box::new(super::SledStore::open(&dir).map_err(NotSigned::Reopen)?) as Box<dyn Store>
        }
        _ => store,
    };
    let kept = store.checkpoints().ok().map(|r| r.len());
    let signer = signer(store.as_ref(), key, origin).map_err(NotSigned::Key)?;
    sign(store.as_ref(), &signer).map(|_| ()).map_err(|e| {
        // `sign` fails with its checkpoint kept only when the store cannot
        // record it; it says so itself.
        match store.checkpoints().ok().map(|r| r.len()) > kept {
            true => NotSigned::Unrecorded(e),
            false => NotSigned::Sign(e),
        }
    })
}

/// Signs a checkpoint if the log holds events past the newest one (a writer
/// that died between an acknowledgement and its checkpoint leaves such a
/// tail); nothing when it does not. Whether one was signed.
pub fn sign_tail(store: &dyn Store, signer: &NoteSigner) -> Result<bool, SignError> {
    let newest = store.checkpoints()?.pop().map(|r| r.checkpoint()).transpose()?;
    if store.log_size()? <= newest.map_or(0, |c| c.size) {
        return Ok(false);
    }
    sign(store, signer).map(|s| s.new)
}

/// What `verify_log` found.
#[derive(Debug, Clone, Serialize)]
pub struct LogVerified {
    /// Leaves in the log.
    pub size: u64,
    /// The root of the whole log, base64.
    pub root: String,
    /// The newest checkpoint's tree size, when there is one (its root matched).
    pub checkpoint: Option<u64>,
}

/// Checks the whole log from the events themselves (`verify --all`): leaf
/// `i` is the SHA-256 leaf hash of the event the log says is there, every
/// event of every game has exactly one leaf, the stored subtrees give the
/// root the leaves give, and that root at the newest checkpoint's size is
/// the signed one. Streams: memory is the frontier, whatever the size.
///
/// A store that computes its small subtrees from the events (sled's below
/// level 4, PostgreSQL's leaves) answers the leaf check from the same
/// bytes, so there it cannot fail: what protects the newest events, which
/// no stored subtree covers yet, is the signed checkpoint (every local
/// write signs one, the server every second) and the events' own chain.
/// Leaves `verify_log` reads in one `Store::log_leaves` call.
const LEAVES_READ_AT_ONCE: u64 = 4096;

pub fn verify_log(store: &dyn Store) -> Result<LogVerified, VerifyLogError> {
    use crate::tlog::merkle::{Frontier, leaf_hash};
    let records = store.checkpoints()?;
    let newest = match records.last() {
        Some(r) => Some(r.checkpoint().map_err(|why| VerifyLogError::Note { place: store.checkpoints_place(), why })?),
        None => None,
    };
    let size = store.log_size()?;
    let mut frontier = Frontier::default();
    let mut at_checkpoint = None;
    // In batches: on a database each batch is one round trip, not four a leaf.
    let mut index = 0;
    while index < size {
        let batch = store.log_leaves(index, LEAVES_READ_AT_ONCE.min(size - index))?;
        if batch.is_empty() {
            return Err(VerifyLogError::Broken(format!("the log has no leaf {index}")));
        }
        for LeafRead { game, seq, event, stored, position } in batch {
            if newest.as_ref().is_some_and(|c| c.size == index) {
                at_checkpoint = Some(frontier.root());
            }
            let event = event.ok_or_else(|| {
                VerifyLogError::Broken(format!("leaf {index} names {game} seq {seq}, which the store does not hold"))
            })?;
            let leaf = leaf_hash(&crate::event::canonical_bytes(&event));
            if stored != leaf {
                return Err(VerifyLogError::Broken(format!(
                    "leaf {index} is not the hash of {game} seq {seq}: the event or the log was changed"
                )));
            }
            if position != Some(index) {
                return Err(VerifyLogError::Broken(format!(
                    "{game} seq {seq} is leaf {index}, but its position says otherwise"
                )));
            }
            frontier.push(leaf);
            index += 1;
        }
    }
    if newest.as_ref().is_some_and(|c| c.size == size) {
        at_checkpoint = Some(frontier.root());
    }
    let mut events = 0;
    for game in store.games()? {
        events += store.head(&game)?.map_or(0, |h| h.seq + 1);
    }
    if events != size {
        return Err(VerifyLogError::Broken(format!("the games hold {events} events, but the log has {size} leaves")));
    }
    let stored = root(&LogNodes(store), size)?;
    if stored != frontier.root() {
        return Err(VerifyLogError::Broken("the log's stored subtrees do not give the root its leaves give".into()));
    }
    if let Some(c) = &newest {
        match at_checkpoint {
            None => {
                return Err(VerifyLogError::Broken(format!(
                    "the log holds {size} events, fewer than checkpoint {}",
                    c.size
                )));
            }
            Some(r) if r != c.root => {
                return Err(VerifyLogError::Broken(format!(
                    "the events give root {} at size {}, but checkpoint {} signed {}: events stored before it were changed",
                    b64(&r),
                    c.size,
                    c.size,
                    b64(&c.root)
                )));
            }
            Some(_) => {}
        }
    }
    Ok(LogVerified { size, root: b64(&stored), checkpoint: newest.map(|c| c.size) })
}
