//! The store's directory as files, below what sled makes of them: undoing
//! what a failed open wrote, and the copy a reading verb opens when the
//! store cannot be written where it is.
//!
//! # What sled 0.34.7 writes when it opens a store
//!
//! Even a store opened only to read is written by sled's `Config::open`
//! (config.rs, pagecache/snapshot.rs, pagecache/segment.rs), in this order:
//!
//! 1. `blobs/`: created when missing (`open_file`).
//! 2. `conf`: written when missing or 8 bytes or shorter (`verify_config`,
//!    `write_config`), from offset 0, never truncated.
//! 3. `db`: opened read-write, created when missing, then locked (flock,
//!    exclusive, not blocking: a second opener fails "in use").
//! 4. `db`, recovery (`advance_snapshot`): when the log went on past the
//!    newest snapshot, the rest of the last segment after the recovered tip
//!    is overwritten ("shredded") and fsynced: up to 8 MiB (our segment
//!    size), which extends `db` to the segment's end when it was shorter.
//!    Segments found torn are overwritten whole.
//! 5. `snap.<lsn>.generating`: a new snapshot, when recovery got past the
//!    newest one: created, written, fsynced, renamed to `snap.<lsn>`, and
//!    only then are older `snap.*` files removed. sled reads every file
//!    named `snap.*` (`.generating` too) and trusts the newest name: a
//!    `.generating` file that a full disk left empty or short makes every
//!    later open fail ("Read corrupted data"), even once space is freed.
//! 6. `blobs/*` newer than the recovered log are removed (`gc_blobs`);
//!    free segments are overwritten, and free segments at the end of `db`
//!    cut off (`SegmentAccountant::start`, `truncate`).
//!
//! # What a failed open undoes (`Before::undo`), and why it is safe
//!
//! Only when sled's own open failed, and only while no one else has the
//! store open (sled's lock on `db` is free, and arbiter processes open a
//! store one at a time under a lock on its directory, `Opening`), so that
//! every change found was made by this open:
//!
//! - a new `snap.*.generating` file is removed: sled renames a complete
//!   snapshot away from that name before it removes any older one, so the
//!   snapshot the store had before is still there;
//! - a new `snap.<lsn>` (renamed, so complete and fsynced) is removed only
//!   if every snapshot the store had before is still there unchanged: sled
//!   then recovers from the old one as it did before this open. If sled had
//!   already removed an old one, the new one is kept: it replaced it;
//! - a new `conf`, `db` or (empty) `blobs/`: the directory held no store
//!   before (or no `conf`, which sled writes again at the next open);
//! - `db` or `conf` grown: cut back to the length it had. What lies past
//!   the old end of `db` is the shred of step 4 (or sled's own first pages
//!   of a store it failed to create); the recovered log ends before the old
//!   end, so no byte that was stored is cut.
//!
//! Not undone: bytes overwritten inside the old length (step 4's shred and
//! step 6's free segments lie past the recovered log, which any successful
//! open overwrites the same way), and files sled removed (an old snapshot
//! replaced by a complete new one, blobs and segments the recovered log
//! does not reach). Nothing that existed before is removed by the undo.
//!
//! When sled's open succeeds, nothing is undone, even if arbiter's own
//! checks then fail (a store that lost events since its last checkpoint):
//! sled may already have cut a damaged tail, and that is the state to
//! report. Arbiter writes nothing more in that case (see `SledStore::open`).

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Whether an I/O error says that the store cannot be written where it is:
/// read-only media, a full disk or quota, a file size limit, no permission.
pub fn is_unwritable(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EROFS | libc::ENOSPC | libc::EDQUOT | libc::EFBIG | libc::EACCES | libc::EPERM)
    )
}

/// How `lock` takes a file's lock (std's, which is `flock` on Linux, the
/// lock sled itself takes on `db`).
#[derive(Clone, Copy)]
enum Take {
    /// Exclusive, waiting for whoever holds it.
    Wait,
    /// Exclusive, only if no one holds it.
    Now,
    /// Shared, only if no one holds it exclusively.
    Shared,
}

/// A lock on `path`, opened read-only here (so it works on read-only
/// media); the lock lasts as long as the returned file. None when the file
/// cannot be opened or the lock cannot be taken.
fn lock(path: &Path, how: Take) -> Option<File> {
    let file = File::open(path).ok()?;
    let taken = match how {
        Take::Wait => file.lock().is_ok(),
        Take::Now => file.try_lock().is_ok(),
        Take::Shared => file.try_lock_shared().is_ok(),
    };
    taken.then_some(file)
}

/// The lock every arbiter process holds on the store's directory while
/// sled opens the store (and while a failed open is undone): no other
/// arbiter process opens the store meanwhile, so whatever is new or grown
/// after a failed open was written by this one. Held only for the open;
/// a store in use is told by sled's own lock on `db`.
pub struct Opening(#[allow(dead_code)] File);

impl Opening {
    /// Waits for other arbiter processes opening the same store. None when
    /// the directory cannot be locked: then a failed open undoes nothing.
    pub fn begin(dir: &Path) -> Option<Opening> {
        lock(dir, Take::Wait).map(Opening)
    }
}

/// What the store's directory held before sled opened it: each file's
/// length (None for a directory), by name relative to the directory
/// (`blobs/` is listed too).
#[derive(Debug, Clone, PartialEq)]
pub struct Before {
    entries: BTreeMap<String, Option<u64>>,
}

fn list(dir: &Path) -> io::Result<BTreeMap<String, Option<u64>>> {
    let mut entries = BTreeMap::new();
    for (prefix, at) in [("", dir.to_path_buf()), ("blobs/", dir.join("blobs"))] {
        let read = match fs::read_dir(&at) {
            Ok(r) => r,
            Err(e) if e.kind() == io::ErrorKind::NotFound && !prefix.is_empty() => continue,
            Err(e) => return Err(e),
        };
        for entry in read {
            let entry = entry?;
            let Ok(name) = entry.file_name().into_string() else { continue };
            let meta = entry.metadata()?;
            entries.insert(format!("{prefix}{name}"), if meta.is_dir() { None } else { Some(meta.len()) });
        }
    }
    Ok(entries)
}

fn is_snapshot(name: &str) -> bool {
    name.starts_with("snap.")
}

impl Before {
    /// Notes the store's files, unless someone has the store open (sled's
    /// lock on `db` is held: what changes next may be theirs) or it cannot
    /// be listed. Call it holding `Opening`.
    pub fn note(dir: &Path) -> Option<Before> {
        let db = dir.join("db");
        // Held while listing: no one writes the store meanwhile.
        let _free = match db.exists() {
            true => Some(lock(&db, Take::Now)?),
            false => None,
        };
        list(dir).ok().map(|entries| Before { entries })
    }

    /// Undoes what a failed sled open wrote (see the module's comment);
    /// returns what it did, in words. Call it holding `Opening`.
    pub fn undo(&self, dir: &Path) -> Vec<String> {
        let db = dir.join("db");
        // If anyone has the store open now, what changed may be theirs.
        let _free = match db.exists() {
            true => match lock(&db, Take::Now) {
                Some(f) => Some(f),
                None => return Vec::new(),
            },
            false => None,
        };
        let Ok(now) = list(dir) else { return Vec::new() };
        let old_snapshots_kept =
            self.entries.iter().filter(|(n, _)| is_snapshot(n)).all(|(n, len)| now.get(n) == Some(len));
        let mut done = Vec::new();
        for (name, len) in &now {
            let path = dir.join(name);
            let sleds = name == "conf" || name == "db";
            match (self.entries.get(name), *len) {
                // New: sled's temporary snapshot, a snapshot beside the old
                // ones, or the files of a store sled failed to create.
                (None, Some(_))
                    if (is_snapshot(name) && (name.ends_with(".generating") || old_snapshots_kept)) || sleds =>
                {
                    done.extend(fs::remove_file(&path).ok().map(|_| format!("removed {name}")));
                }
                // Grown: cut back to the length it had.
                (Some(Some(old)), Some(new)) if sleds && new > *old => {
                    let cut = fs::OpenOptions::new().write(true).open(&path).and_then(|f| {
                        f.set_len(*old)?;
                        f.sync_all()
                    });
                    done.extend(cut.ok().map(|_| format!("cut {name} back from {new} to {old} bytes")));
                }
                _ => {}
            }
        }
        // A `blobs/` this open made is empty (sled writes blobs only after
        // it opened); remove_dir refuses anything else.
        if !self.entries.contains_key("blobs")
            && now.get("blobs") == Some(&None)
            && fs::remove_dir(dir.join("blobs")).is_ok()
        {
            done.push("removed blobs/".into());
        }
        if !done.is_empty()
            && let Ok(d) = File::open(dir)
        {
            let _ = d.sync_all();
        }
        done
    }
}

/// A copy of a store in a directory of its own, removed with everything in
/// it when dropped (after the store opened on it is closed). Its file
/// `IN_USE` is locked while it is in use (see `remove_stale_copies`; not
/// the directory, which `Opening` locks while sled opens the copy).
#[derive(Debug)]
pub struct Copy {
    path: PathBuf,
    _in_use: Option<File>,
}

impl Copy {
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Copy {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.path);
    }
}

const COPY_PREFIX: &str = "arbiter-read-copy-";
const IN_USE: &str = "in-use";

/// Where a copy may go, best first: /dev/shm (memory: the store's own disk
/// may be the full one), then the system's temporary directory.
pub fn copy_places() -> Vec<PathBuf> {
    let mut places = Vec::new();
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        places.push(shm.to_path_buf());
    }
    let tmp = std::env::temp_dir();
    if !places.contains(&tmp) {
        places.push(tmp);
    }
    places
}

/// Why a store could not be copied to be read (`copy`).
#[derive(Debug, thiserror::Error)]
pub enum CopyError {
    #[error("cannot lock {db} for a copy (is the store in use?)")]
    Locked { db: String },
    #[error("cannot make a directory in {parent}: {why}")]
    MakeDir { parent: String, why: io::Error },
    #[error("cannot read {dir}: {why}")]
    Read { dir: String, why: io::Error },
    #[error("cannot copy {from} to {to}: {why}")]
    Copy { from: String, to: String, why: io::Error },
}

/// Copies the store at `dir` into a new directory under `parent`: sled's
/// files, the journal's files and the checkpoints, never the log's private key. A shared lock
/// on `db` is held while copying: sled holds an exclusive one while a
/// store is open, so no one writes the store while it is copied.
pub fn copy(dir: &Path, parent: &Path) -> Result<Copy, CopyError> {
    let db = dir.join("db");
    let _shared = lock(&db, Take::Shared).ok_or_else(|| CopyError::Locked { db: db.display().to_string() })?;
    remove_stale_copies(parent);
    let copy = new_dir(parent).map_err(|why| CopyError::MakeDir { parent: parent.display().to_string(), why })?;
    let shown = |p: &Path, why: io::Error| CopyError::Copy {
        from: p.display().to_string(),
        to: copy.path.display().to_string(),
        why,
    };
    // `fs::copy` keeps the permissions, and sled opens its files to write:
    // a store's files may be read-only (an archive), the copy's are not.
    let copy_file = |from: &Path, to: &Path| {
        fs::copy(from, to)?;
        fs::set_permissions(to, fs::Permissions::from_mode(0o600))
    };
    let read = |why| CopyError::Read { dir: dir.display().to_string(), why };
    let entries = fs::read_dir(dir).map_err(read)?;
    for entry in entries {
        let entry = entry.map_err(read)?;
        let Ok(name) = entry.file_name().into_string() else { continue };
        let from = entry.path();
        match name.as_str() {
            "blobs" => {
                let into = copy.path.join("blobs");
                fs::create_dir(&into).map_err(|e| shown(&from, e))?;
                for blob in fs::read_dir(&from).map_err(|e| shown(&from, e))? {
                    let blob = blob.map_err(|e| shown(&from, e))?;
                    copy_file(&blob.path(), &into.join(blob.file_name())).map_err(|e| shown(&blob.path(), e))?;
                }
            }
            "conf" | "db" | super::checkpoints::CHECKPOINT_FILE | super::journal::FILE | super::journal::OLDER => {
                copy_file(&from, &copy.path.join(&name)).map_err(|e| shown(&from, e))?;
            }
            _ if is_snapshot(&name) => {
                copy_file(&from, &copy.path.join(&name)).map_err(|e| shown(&from, e))?;
            }
            _ => {}
        }
    }
    Ok(copy)
}

/// A new directory, readable by its owner only (a store holds the hashes
/// of the server's tokens).
fn new_dir(parent: &Path) -> io::Result<Copy> {
    use std::os::unix::fs::DirBuilderExt;
    static N: AtomicU64 = AtomicU64::new(0);
    loop {
        let n = N.fetch_add(1, Ordering::Relaxed);
        let path = parent.join(format!("{COPY_PREFIX}{}-{n}", std::process::id()));
        match fs::DirBuilder::new().mode(0o700).create(&path) {
            Ok(()) => {
                let in_use = File::create(path.join(IN_USE)).ok().and_then(|_| lock(&path.join(IN_USE), Take::Wait));
                return Ok(Copy { path, _in_use: in_use });
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Removes copies left by arbiter processes that ended without removing
/// theirs (killed): a copy is named after its process, and one whose
/// process is gone and whose directory no one has locked is nobody's (the
/// lock also keeps the copy of a process in another pid namespace sharing
/// this directory).
fn remove_stale_copies(parent: &Path) {
    let Ok(entries) = fs::read_dir(parent) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix(COPY_PREFIX)).and_then(|r| r.split('-').next())
        else {
            continue;
        };
        let Ok(pid) = pid.parse::<libc::pid_t>() else { continue };
        // SAFETY: signal 0 only asks whether the process exists.
        let gone = unsafe { libc::kill(pid, 0) } != 0 && io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        // (A copy without the file was made by an older arbiter, or is not
        // made yet: its process is gone, though.)
        let in_use = entry.path().join(IN_USE);
        let free = !in_use.exists() || lock(&in_use, Take::Now).is_some();
        if gone && pid > 0 && free {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, len: usize) {
        fs::write(path, vec![7u8; len]).unwrap();
    }

    fn names(dir: &Path) -> BTreeMap<String, Option<u64>> {
        list(dir).unwrap()
    }

    /// What a full disk leaves when sled's open fails at its snapshot: a new
    /// empty `snap.*.generating`, `db` grown by the shred. Both undone; the
    /// files that were there before stay as they were.
    #[test]
    fn undo_removes_a_new_partial_snapshot_and_cuts_db_back() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        fs::create_dir(d.join("blobs")).unwrap();
        write(&d.join("conf"), 63);
        write(&d.join("db"), 904);
        write(&d.join("snap.0000000000000388"), 228);
        write(&d.join("checkpoints"), 300);
        let before = Before::note(d).unwrap();
        let as_before = names(d);
        // The failed open:
        fs::OpenOptions::new().write(true).open(d.join("db")).unwrap().set_len(8 * 1024 * 1024 - 1).unwrap();
        write(&d.join("snap.000000000000C886.generating"), 0);
        let done = before.undo(d);
        assert_eq!(names(d), as_before, "{done:?}");
        assert_eq!(fs::read(d.join("db")).unwrap(), vec![7u8; 904]);
    }

    /// A new store whose first open failed: the directory is as it was.
    #[test]
    fn undo_of_a_new_store_leaves_the_directory_empty() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let before = Before::note(d).unwrap();
        fs::create_dir(d.join("blobs")).unwrap();
        write(&d.join("conf"), 0);
        write(&d.join("db"), 0);
        before.undo(d);
        assert!(names(d).is_empty(), "{:?}", names(d));
    }

    /// A complete new snapshot that replaced the old one is kept (the store
    /// would have no snapshot left); one beside the old one is removed.
    #[test]
    fn undo_keeps_a_new_snapshot_that_replaced_the_old_one() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        write(&d.join("db"), 904);
        write(&d.join("snap.0000000000000388"), 228);
        let before = Before::note(d).unwrap();
        write(&d.join("snap.0000000000000400"), 228);
        before.undo(d);
        assert!(!d.join("snap.0000000000000400").exists(), "beside the old one: removed");
        write(&d.join("snap.0000000000000400"), 228);
        fs::remove_file(d.join("snap.0000000000000388")).unwrap();
        before.undo(d);
        assert!(d.join("snap.0000000000000400").exists(), "the only snapshot left: kept");
    }

    /// Nothing that existed before is removed or cut, and nothing at all is
    /// undone while someone else has the store open.
    #[test]
    fn undo_never_touches_what_was_there_or_a_store_in_use() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        write(&d.join("db"), 904);
        write(&d.join("snap.0000000000000388.generating"), 0);
        write(&d.join("log.key"), 80);
        let before = Before::note(d).unwrap();
        write(&d.join("other"), 5);
        assert!(before.undo(d).is_empty());
        assert!(d.join("snap.0000000000000388.generating").exists() && d.join("other").exists());
        // Someone opens the store and writes: the undo stays away.
        let held = lock(&d.join("db"), Take::Now).unwrap();
        assert!(Before::note(d).is_none(), "no note of a store in use");
        fs::OpenOptions::new().write(true).open(d.join("db")).unwrap().set_len(4096).unwrap();
        assert!(before.undo(d).is_empty());
        assert_eq!(fs::metadata(d.join("db")).unwrap().len(), 4096);
        drop(held);
    }

    #[test]
    fn a_copy_holds_the_store_but_not_the_key_and_goes_when_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let into = tempfile::tempdir().unwrap();
        let d = dir.path();
        fs::create_dir(d.join("blobs")).unwrap();
        write(&d.join("blobs/77"), 3);
        for f in ["conf", "db", "snap.0000000000000388", "checkpoints", "log.key"] {
            write(&d.join(f), 10);
        }
        let copy = copy(d, into.path()).unwrap();
        let mut held = names(copy.path());
        held.remove("blobs");
        let want: Vec<&str> = vec!["blobs/77", "checkpoints", "conf", "db", IN_USE, "snap.0000000000000388"];
        assert_eq!(held.keys().map(String::as_str).collect::<Vec<_>>(), want);
        let at = copy.path().to_path_buf();
        drop(copy);
        assert!(!at.exists());
    }

    /// A copy whose process was killed is removed by the next copy made
    /// there; one in use is not.
    #[test]
    fn copies_left_by_killed_processes_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let into = tempfile::tempdir().unwrap();
        write(&dir.path().join("db"), 10);
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let stale = into.path().join(format!("{COPY_PREFIX}{dead}-0"));
        fs::create_dir(&stale).unwrap();
        write(&stale.join("db"), 10);
        write(&stale.join(IN_USE), 0);
        let live = copy(dir.path(), into.path()).unwrap();
        assert!(!stale.exists(), "the killed process's copy is removed");
        let other = copy(dir.path(), into.path()).unwrap();
        assert!(live.path().exists() && other.path().exists(), "copies in use stay");
    }
}
