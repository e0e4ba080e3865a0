//! The journal of a sled store: what makes a small append durable in one
//! trip to the disk.
//!
//! sled's own way to durability is its `flush()` (a write of its buffer
//! and `sync_file_range`, on its I/O thread, which arbiter must wait for
//! on a thread of its own: see `SledStore::flush_within`), then an
//! `fdatasync` of its log: two trips to the disk and four wake-ups across
//! threads per acknowledgement. An append of a few events instead writes
//! each event's exact bytes here, one `write` and one `fdatasync` for a
//! whole group commit, and is acknowledged then; sled holds the same
//! events in memory, and writes them at its next own sync
//! (`SledStore::sync_through`: a large batch, the store's close or open,
//! the server's shutdown). That sync covers everything inserted before
//! it, so the journal is then emptied. (A setting is made durable by
//! sled's flush alone, beside the commit: the journal keeps its records.)
//!
//! A journal grown past `LIMIT` is not emptied that way, in the commit's
//! round, where every waiting appender would wait for sled's sync too (at
//! 64 tables through the API, those rounds were the p99): it is rotated
//! (`Journal::rotate`). Its file is renamed `OLDER`, a new `FILE` takes
//! the round's records, and the round ends as any other; sled's own sync
//! then runs behind it (`SledStore::write_back_behind`), and once it has,
//! `OLDER` is removed (`Journal::forget_older`). Until then both files
//! hold acknowledged events sled may lack, `OLDER` the earlier ones. A
//! journal that passes `LIMIT` again while `OLDER` is still there is
//! emptied in the round, as before (`SledStore::sync_through`), with
//! `OLDER`.
//!
//! After a crash, sled recovers a prefix of its inserts, and the two
//! files hold every acknowledged event since sled's last own sync, in the
//! order of the log (`OLDER`'s, then `FILE`'s). An open replays them
//! (`SledStore::replay_journal`):
//! an event sled holds with the same bytes is passed over, one it lacks is
//! inserted as an append would be (it must follow its game's head), and
//! anything else is damage. The positions in the log come out as they were,
//! so a checkpoint signed over them still matches.
//!
//! # Format
//!
//! A file of records, one per insert (an append, or a batch of at most
//! `MOST_EVENTS` events: its events stand or fall together), each:
//!
//! ```text
//! u32 LE  length of the body
//! body    u8 length of the game's name, the name, u8 count of events,
//!         then each event: u32 LE length, its exact bytes
//! 32      BLAKE3 of the body
//! ```
//!
//! and after the last record, `END` (four zeros: a body of length 0).
//!
//! The first write to `FILE` after it was made or emptied cuts it to
//! nothing and makes it `LIMIT` long with zeros, synced (`Journal::file`);
//! records are then written over that space, a group commit's records
//! and a new `END` in one write over the last `END`: an fdatasync then
//! writes those blocks alone, where a write that makes the file longer
//! also commits its new size (1.5x to 2.1x as many syncs per second
//! here). So past the journal's last record there is only `END` and
//! zeros, synced, whatever a process did before. A crash in the middle
//! of a write leaves a record cut short, or the `END` before it (the
//! write's later blocks may be on the disk, whole records that were never
//! acknowledged, and sled may lack them): reading stops at the first
//! record that is cut short or fails its hash, and what follows is not
//! replayed. Nothing is written over that space until the file has been
//! cut to nothing again (by the next write after the open), so what a
//! crash left past the end is never read as the journal. (A file emptied
//! with an `END` and written over, where it still held older records,
//! could read, after a crash that kept a write's later blocks but not its
//! first, older records then newer ones that were never acknowledged.)
//! A batch is one record, so it is replayed whole or not at all.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::limits::{MAX_EVENT_BYTES, MAX_GAME_NAME_BYTES};

/// The journal's file in the store's directory.
pub const FILE: &str = "journal";

/// The journal's file before its last rotation, while sled's own sync
/// that covers it runs (`Journal::rotate`).
pub const OLDER: &str = "journal.older";

/// Past this many bytes, the journal is rotated and sled's own sync runs
/// behind the commit: an open after a crash replays at most about twice
/// this much (about 7,000 events of the sample), and a sync of sled's
/// costs about what a write here does, so one per this many bytes costs
/// nothing that shows.
pub const LIMIT: u64 = 1024 * 1024;

/// An insert of more events than this is not journaled: its sync, sled's
/// own, is already one for the whole batch, and the journal would write
/// its bytes twice. (`append -` stores chunks of 1,000.)
pub const MOST_EVENTS: usize = 64;

const HASH_BYTES: usize = 32;

/// What follows the journal's last record: a body length of 0, which no
/// record has. Each write ends with it (`Journal::append`), where the
/// file holds zeros: what a crash left further on is never read.
const END: [u8; 4] = [0; 4];

/// The longest body a record may have.
const MOST_BODY_BYTES: usize = 2 + MAX_GAME_NAME_BYTES + MOST_EVENTS * (4 + MAX_EVENT_BYTES);

/// One insert as the journal holds it: its game, and its events' exact
/// bytes in seq order.
pub type Insert = (String, Vec<Vec<u8>>);

/// Appends to `out` the record of one insert to `game` of `events`, each
/// as stored (its exact bytes).
pub fn encode<'a>(game: &str, events: impl ExactSizeIterator<Item = &'a [u8]>, out: &mut Vec<u8>) {
    // Checked on the way in (`check_game_name`, `check_incoming`, and the
    // caller journals at most `MOST_EVENTS`).
    debug_assert!(game.len() <= MAX_GAME_NAME_BYTES && (1..=MOST_EVENTS).contains(&events.len()));
    let start = out.len();
    out.extend_from_slice(&[0; 4]);
    out.push(game.len() as u8);
    out.extend_from_slice(game.as_bytes());
    out.push(events.len() as u8);
    for bytes in events {
        debug_assert!(bytes.len() <= MAX_EVENT_BYTES);
        out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        out.extend_from_slice(bytes);
    }
    let body = (out.len() - start - 4) as u32;
    out[start..start + 4].copy_from_slice(&body.to_le_bytes());
    let hash = blake3::hash(&out[start + 4..]);
    out.extend_from_slice(hash.as_bytes());
}

/// A journal's file as read: its records (one insert each) in order, and
/// how many bytes at its end were not a whole record (a write a crash cut
/// short).
#[derive(Debug, Default, PartialEq)]
pub struct Read {
    pub records: Vec<Insert>,
    pub torn: u64,
    /// Where its whole records end: the journal's length (the file is
    /// longer: its space is made ahead).
    len: u64,
}

impl Read {
    pub fn bytes(&self) -> u64 {
        self.len
    }
}

/// Both of a store's journal files as read, in the order their records
/// were written: `OLDER` (left by a rotation whose sync of sled's had not
/// ended), then `FILE`.
#[derive(Debug, Default, PartialEq)]
pub struct Files {
    pub older: Read,
    pub newer: Read,
}

impl Files {
    /// Each file's path (for what an open says) and what it held, oldest first.
    pub fn in_order<'a>(&'a self, dir: &Path) -> [(PathBuf, &'a Read); 2] {
        [(dir.join(OLDER), &self.older), (dir.join(FILE), &self.newer)]
    }

    pub fn bytes(&self) -> u64 {
        self.older.bytes() + self.newer.bytes()
    }
}

/// Reads both journal files of the store at `dir`.
pub fn read_files(dir: &Path) -> io::Result<Files> {
    Ok(Files { older: read(&dir.join(OLDER))?, newer: read(&dir.join(FILE))? })
}

/// Reads the journal file at `path` (none: empty).
pub fn read(path: &Path) -> io::Result<Read> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Read::default()),
        Err(e) => return Err(e),
    };
    let mut read = Read::default();
    let mut at = 0;
    while let Some((record, next)) = record_at(&bytes, at) {
        read.records.push(record);
        at = next;
    }
    // The journal ends at `END` after its last record; anything else
    // there, up to the next four zeros (the space the file was made with,
    // or an older write's end), is a write cut short.
    let rest = &bytes[at..];
    read.torn = rest.windows(END.len()).position(|w| w == END).unwrap_or(rest.len()) as u64;
    read.len = at as u64;
    Ok(read)
}

/// The whole record at `at`, and where the next begins.
fn record_at(bytes: &[u8], at: usize) -> Option<(Insert, usize)> {
    let len = u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?) as usize;
    if len > MOST_BODY_BYTES {
        return None;
    }
    let body = bytes.get(at + 4..at + 4 + len)?;
    let hash = bytes.get(at + 4 + len..at + 4 + len + HASH_BYTES)?;
    if blake3::hash(body).as_bytes() != hash {
        return None;
    }
    let name_len = *body.first()? as usize;
    let game = std::str::from_utf8(body.get(1..1 + name_len)?).ok()?;
    let count = *body.get(1 + name_len)? as usize;
    let mut events = Vec::with_capacity(count);
    let mut rest = &body[2 + name_len..];
    for _ in 0..count {
        let event_len = u32::from_le_bytes(rest.get(..4)?.try_into().ok()?) as usize;
        events.push(rest.get(4..4 + event_len)?.to_vec());
        rest = &rest[4 + event_len..];
    }
    if game.is_empty() || events.is_empty() || events.iter().any(Vec::is_empty) || !rest.is_empty() {
        return None;
    }
    Some(((game.to_string(), events), at + 4 + len + HASH_BYTES))
}

/// The journal's files: `FILE`, opened at the first write (a store only
/// read never makes one), and `OLDER` while a rotation's sync of sled's
/// runs.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    older: PathBuf,
    file: Option<File>,
    len: u64,
    /// How long `OLDER` is (0: there is none, or sled holds what it held).
    older_len: u64,
    /// How many rotations were made: a sync behind one forgets `OLDER`
    /// only if no rotation came after it (`forget_older`).
    rotations: u64,
    /// Whether the store has put the records the journal held at its open
    /// back into sled (or it held none): until then, nothing is appended to
    /// it and `clear` leaves it as it is, so an open that fails part way
    /// leaves the journal for the next.
    replayed: bool,
}

impl Journal {
    /// The journal of the store at `dir`, as read at its open.
    pub fn new(dir: &Path, read: &Files) -> Journal {
        Journal {
            path: dir.join(FILE),
            older: dir.join(OLDER),
            file: None,
            len: read.newer.bytes(),
            older_len: read.older.bytes(),
            rotations: 0,
            replayed: read.bytes() == 0,
        }
    }

    /// How long `FILE` is.
    pub fn bytes(&self) -> u64 {
        self.len
    }

    /// How long `OLDER` is: more than 0 while a sync behind a rotation runs.
    pub fn older_bytes(&self) -> u64 {
        self.older_len
    }

    /// How many rotations were made.
    pub fn rotations(&self) -> u64 {
        self.rotations
    }

    /// Whether what the journal held at the open is in sled now.
    pub fn replayed(&self) -> bool {
        self.replayed
    }

    /// The store put back every record the journal held at its open.
    pub fn mark_replayed(&mut self) {
        self.replayed = true;
    }

    /// `FILE`, at this process's first write to it (or after a rotation or
    /// a `clear`): cut to nothing, then made `LIMIT` long with zeros and
    /// synced so, before any record is written over them. Records are then
    /// written over space the file already has: an fdatasync of such a
    /// write is a write of its blocks alone, where one that makes the file
    /// longer must also commit the file's new size to the filesystem's own
    /// journal (measured here, 7,000-byte writes each followed by
    /// fdatasync: 1.5x to 2.1x as many per second written over as
    /// appended). Zeros read as `END`. Cut first: a crash may have left
    /// whole records that were never acknowledged past the `END` an open
    /// read to (see the module's comment); whatever the file held is in
    /// sled by now (the open put back what it read, or it was covered by
    /// sled's own sync). (About 3 ms here, once per process that writes,
    /// once per rotation and once after each `clear`.)
    fn file(&mut self) -> io::Result<&File> {
        if self.file.is_none() {
            let made = !self.path.exists();
            let file = OpenOptions::new().create(true).truncate(true).read(true).write(true).open(&self.path)?;
            file.write_all_at(&vec![0; LIMIT as usize], 0)?;
            file.sync_data()?;
            if made {
                // The new file's name must be durable before anything in
                // it is (and with it a rotation's rename).
                sync_dir(&self.path)?;
            }
            self.file = Some(file);
        }
        Ok(self.file.as_ref().expect("opened above"))
    }

    /// Writes `records` (whole, from `encode`) over the `END` after the
    /// journal's last record, with an `END` after them, and syncs them.
    /// A crash before the sync ends leaves the records before them and
    /// either these whole, or a record cut short, or the `END` they were
    /// to replace: reading stops there, or past these whole records at
    /// the zeros beyond them.
    pub fn append(&mut self, records: &[u8]) -> io::Result<()> {
        assert!(self.replayed, "an append to a journal not yet replayed");
        let at = self.len;
        let mut write = Vec::with_capacity(records.len() + END.len());
        write.extend_from_slice(records);
        write.extend_from_slice(&END);
        let file = self.file()?;
        file.write_all_at(&write, at)?;
        file.sync_data()?;
        self.len += records.len() as u64;
        Ok(())
    }

    /// Renames `FILE` to `OLDER` and syncs the directory, so that the
    /// next `append` starts a new `FILE` (whose creation syncs it again).
    /// Only with no `OLDER` (sled holds what the last rotation moved
    /// there): one file waits for sled at a time. A crash before the
    /// directory's sync leaves the records under one name or the other,
    /// both read by an open.
    pub fn rotate(&mut self) -> io::Result<()> {
        assert!(self.replayed && self.older_len == 0, "a rotation while the older file is still needed");
        self.file = None;
        if self.len > 0 {
            std::fs::rename(&self.path, &self.older)?;
            sync_dir(&self.path)?;
        }
        self.older_len = self.len;
        self.len = 0;
        self.rotations += 1;
        Ok(())
    }

    /// Empties `FILE` once sled's own sync covers every record in it:
    /// cuts it to nothing (which needs no space on a full disk), and the
    /// next write makes its space again (`file`): records are never
    /// written over space that held records. Not synced: a crash that
    /// undoes it leaves records that an open passes over (sled holds
    /// them). (About 3 ms for the next write, after a sync of sled's that
    /// costs more: a large batch, the journal full again while its older
    /// file waits, the close.)
    pub fn clear(&mut self) -> io::Result<()> {
        if self.len == 0 || !self.replayed {
            return Ok(());
        }
        let file = match self.file.take() {
            Some(file) => file,
            None => OpenOptions::new().write(true).open(&self.path)?,
        };
        file.set_len(0)?;
        self.len = 0;
        Ok(())
    }

    /// Empties both files (`clear`, `forget_older`), once sled's own sync
    /// covers every record in them.
    pub fn empty(&mut self) -> io::Result<()> {
        self.clear()?;
        self.forget_older(None)
    }

    /// Removes `OLDER`, once sled's own sync covers every record in it,
    /// if no rotation came after the one `rotation` counts (whose file it
    /// would be); a sync that covers both files passes `None`. Not
    /// synced, as `clear`.
    pub fn forget_older(&mut self, rotation: Option<u64>) -> io::Result<()> {
        if self.older_len == 0 || !self.replayed || rotation.is_some_and(|r| r != self.rotations) {
            return Ok(());
        }
        match std::fs::remove_file(&self.older) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        self.older_len = 0;
        Ok(())
    }
}

/// Syncs the directory that holds `path`: a name made or changed there is
/// durable once this returns.
fn sync_dir(path: &Path) -> io::Result<()> {
    File::open(path.parent().unwrap_or(Path::new(".")))?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records of one-event inserts.
    fn journal_of(records: &[(&str, &[u8])]) -> Vec<u8> {
        let mut out = Vec::new();
        for (game, bytes) in records {
            encode(game, std::iter::once(*bytes), &mut out);
        }
        out
    }

    #[test]
    fn records_read_back_in_order_and_a_missing_journal_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        assert_eq!(read(&path).unwrap(), Read::default());
        let mut journal = Journal::new(dir.path(), &Files::default());
        journal.append(&journal_of(&[("g", b"{\"seq\":1}"), ("other", b"{\"seq\":7}")])).unwrap();
        journal.append(&journal_of(&[("g", b"{\"seq\":2}")])).unwrap();
        let read = read(&path).unwrap();
        let games: Vec<&str> = read.records.iter().map(|(g, _)| g.as_str()).collect();
        assert_eq!(games, ["g", "other", "g"]);
        assert_eq!(read.records[2].1, vec![b"{\"seq\":2}".to_vec()]);
        assert_eq!(read.torn, 0);
        assert_eq!(journal.bytes(), read.bytes());
        assert_eq!(std::fs::metadata(&path).unwrap().len(), LIMIT, "the file is made ahead, records written over it");
    }

    /// A write cut short anywhere in its last record leaves the records
    /// before it; a byte changed in a record ends the journal there.
    #[test]
    fn reading_stops_at_a_record_cut_short_or_changed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        let whole = journal_of(&[("g", b"{\"seq\":1}"), ("g", b"{\"seq\":2}")]);
        let first = journal_of(&[("g", b"{\"seq\":1}")]).len();
        for cut in first..whole.len() {
            std::fs::write(&path, &whole[..cut]).unwrap();
            let read = read(&path).unwrap();
            assert_eq!(read.records.len(), 1, "cut at {cut}");
            assert_eq!(read.torn, (cut - first) as u64);
        }
        for at in 0..first {
            let mut changed = whole.clone();
            changed[at] ^= 0x20;
            std::fs::write(&path, &changed).unwrap();
            let read = read(&path).unwrap();
            assert!(read.records.is_empty(), "a byte changed at {at}: {read:?}");
            assert_eq!(read.torn, whole.len() as u64);
        }
    }

    #[test]
    fn clear_empties_it_and_appends_start_again_at_its_beginning() {
        let dir = tempfile::tempdir().unwrap();
        let mut journal = Journal::new(dir.path(), &Files::default());
        journal.append(&journal_of(&[("g", b"{\"seq\":1}")])).unwrap();
        journal.clear().unwrap();
        assert_eq!((journal.bytes(), read(&dir.path().join(FILE)).unwrap()), (0, Read::default()));
        assert_eq!(std::fs::metadata(dir.path().join(FILE)).unwrap().len(), 0, "cut to nothing");
        journal.append(&journal_of(&[("g", b"{\"seq\":2}")])).unwrap();
        assert_eq!(std::fs::metadata(dir.path().join(FILE)).unwrap().len(), LIMIT, "its space made again");
        assert_eq!(
            read(&dir.path().join(FILE)).unwrap().records,
            vec![("g".to_string(), vec![b"{\"seq\":2}".to_vec()])]
        );
    }

    /// Past the journal's records there are only zeros: after a `clear`
    /// the next write makes the file's space again, so no older record
    /// lies further on (one of the same size would begin just where the
    /// new ones end). A process's first write cuts the file to nothing
    /// too, so what an earlier process left past the end (here a whole
    /// record, as a crash may leave one never acknowledged) is gone before
    /// any record is written over it.
    #[test]
    fn a_file_is_read_only_to_its_end_and_each_process_starts_it_afresh() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        let one = |seq: u8| journal_of(&[("g", format!("{{\"seq\":{seq}}}").as_bytes())]);
        let seqs_in = |path: &Path| -> Vec<Vec<u8>> {
            read(path).unwrap().records.into_iter().map(|(_, e)| e[0].clone()).collect()
        };
        let mut journal = Journal::new(dir.path(), &Files::default());
        for seq in 1..=3 {
            journal.append(&one(seq)).unwrap();
        }
        journal.clear().unwrap();
        journal.append(&one(4)).unwrap();
        assert_eq!(seqs_in(&path), [b"{\"seq\":4}".to_vec()]);
        let bytes = std::fs::read(&path).unwrap();
        assert!(bytes[one(4).len()..].iter().all(|b| *b == 0), "records 2 and 3 are gone, not only ended");
        drop(journal);

        // What a crash may leave: a record, its END, and past it a whole
        // record that was never acknowledged.
        let mut left = one(5);
        left.extend_from_slice(&END);
        left.extend_from_slice(&one(6));
        std::fs::write(&path, &left).unwrap();
        let read_at_open = read_files(dir.path()).unwrap();
        assert_eq!(read_at_open.newer.records.len(), 1, "reading stops at the END");
        let mut journal = Journal::new(dir.path(), &read_at_open);
        journal.mark_replayed();
        journal.clear().unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 0, "an open's emptying cuts a file it did not write");
        journal.append(&one(7)).unwrap();
        assert_eq!(seqs_in(&path), [b"{\"seq\":7}".to_vec()]);
        drop(journal);

        // The same with nothing to read at the open (the record that was
        // cut short was the first): the first write cuts the file too.
        std::fs::write(&path, [&END[..], &one(6)].concat()).unwrap();
        let mut journal = Journal::new(dir.path(), &read_files(dir.path()).unwrap());
        assert!(journal.replayed());
        journal.append(&one(8)).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let written = one(8).len() + END.len();
        assert_eq!(bytes.len() as u64, LIMIT);
        assert!(bytes[written..].iter().all(|b| *b == 0), "what the crash left past the end is gone");
        assert_eq!(seqs_in(&path), [b"{\"seq\":8}".to_vec()]);
    }

    /// A rotation renames the file to `OLDER` and the next append starts
    /// a new one; both are read, oldest first. `OLDER` is forgotten only
    /// by a sync that covers it: one behind its own rotation, or one that
    /// covers both files, not one behind an earlier rotation.
    #[test]
    fn a_rotation_keeps_the_older_file_until_a_sync_covers_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut journal = Journal::new(dir.path(), &Files::default());
        journal.append(&journal_of(&[("g", b"{\"seq\":1}")])).unwrap();
        journal.rotate().unwrap();
        journal.append(&journal_of(&[("g", b"{\"seq\":2}")])).unwrap();
        let read = read_files(dir.path()).unwrap();
        let seqs: Vec<&[u8]> =
            read.in_order(dir.path()).iter().flat_map(|(_, r)| &r.records).map(|(_, e)| e[0].as_slice()).collect();
        assert_eq!(seqs, [b"{\"seq\":1}".as_slice(), b"{\"seq\":2}".as_slice()]);
        assert_eq!((journal.older_bytes(), journal.bytes()), (read.older.bytes(), read.newer.bytes()));
        journal.forget_older(Some(0)).unwrap();
        assert!(dir.path().join(OLDER).exists(), "a sync behind an earlier rotation");
        journal.forget_older(Some(1)).unwrap();
        assert!(!dir.path().join(OLDER).exists());
        assert_eq!(journal.older_bytes(), 0);
        journal.rotate().unwrap();
        journal.forget_older(None).unwrap();
        assert_eq!(read_files(dir.path()).unwrap(), Files::default());
        // A journal read at an open with records is not written until replayed.
        journal.append(&journal_of(&[("g", b"{\"seq\":3}")])).unwrap();
        let mut reopened = Journal::new(dir.path(), &read_files(dir.path()).unwrap());
        assert!(!reopened.replayed());
        reopened.clear().unwrap();
        assert!(reopened.bytes() > 0, "a journal not yet replayed is kept");
    }

    /// A batch is one record: cut short anywhere, none of its events is
    /// read, and the insert before it is.
    #[test]
    fn a_batch_is_read_whole_or_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        let mut whole = journal_of(&[("g", b"{\"seq\":1}")]);
        let first = whole.len();
        let batch: [&[u8]; 3] = [b"{\"seq\":2}", b"{\"seq\":3}", b"{\"seq\":4}"];
        encode("g", batch.into_iter(), &mut whole);
        let read_whole = read_of(&path, &whole);
        assert_eq!(read_whole.records[1], ("g".to_string(), batch.iter().map(|b| b.to_vec()).collect()));
        for cut in first..whole.len() {
            let read = read_of(&path, &whole[..cut]);
            assert_eq!(read.records.len(), 1, "cut at {cut}");
        }
    }

    fn read_of(path: &Path, bytes: &[u8]) -> Read {
        std::fs::write(path, bytes).unwrap();
        read(path).unwrap()
    }
}
