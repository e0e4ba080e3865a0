//! Journal replay at open: what the journal's records hold that sled
//! lacks, checked whole before anything is written, whether it may explain
//! what the newest checkpoint finds missing, and putting it back.

use std::collections::HashMap;

use super::SledStore;
use super::open::{damaged, read_failure};
use crate::event::{Event, Link};
use crate::store::journal;
use crate::store::{AppendError, OpenError, ReadError, Store};

/// Events the journal holds and sled lacks: a game, and the events of one
/// insert to it (`SledStore::journal_adds`).
pub(super) type Missing = (String, Vec<(Event, Vec<u8>)>);

impl SledStore {
    /// What the journal's records add to what sled holds, checked whole
    /// before anything is written (see `super::journal`): in the
    /// journal's order (its older file's, then its file's), which is the
    /// log's, each insert's events that sled
    /// lacks, each following its game's head (sled's, or the journal's
    /// event before it). An event sled holds with the same bytes is passed
    /// over. An event that is not whole, differs from the one stored at
    /// its seq, or does not follow its game's head is damage: the store
    /// does not open, and nothing is written.
    pub(super) fn journal_adds(&self, shown: &str, journaled: &journal::Files) -> Result<Vec<Missing>, OpenError> {
        let files = journaled.in_order(&self.dir);
        let records = files.iter().flat_map(|(place, read)| {
            read.records
                .iter()
                .enumerate()
                .map(move |(i, record)| (format!("{}, record {}", place.display(), i + 1), record))
        });
        let mut heads: HashMap<&str, Option<Link>> = HashMap::new();
        let mut adds = Vec::new();
        let failure = |e| read_failure(shown, e, |e| e.to_string());
        for (at, (game, events)) in records {
            let bad = |why: String| damaged(shown, format!("{at}: game {game}: {why}"));
            let tree = match self.existing_tree(game) {
                Ok(tree) => Some(tree),
                Err(ReadError::NoSuchGame(_)) => None,
                Err(e) => return Err(failure(e)),
            };
            let mut lacking = Vec::new();
            for bytes in events {
                let parsed = crate::event::parse_stored(bytes).map_err(|e| bad(e.to_string()))?;
                let seq = parsed.event.seq;
                crate::event::check_stored(&parsed, seq, bytes).map_err(|e| bad(e.to_string()))?;
                let stored = match &tree {
                    Some(t) => self.stored_event(game, t, seq).map_err(failure)?.map(|(_, b)| b),
                    None => None,
                };
                match stored {
                    Some(stored) if stored != *bytes => {
                        return Err(bad(format!("seq {seq} differs from the event stored there")));
                    }
                    Some(_) if lacking.is_empty() => continue,
                    Some(_) => {
                        return Err(bad(format!("seq {seq} is stored, but an event before it in its insert is not")));
                    }
                    None => {}
                }
                let head = match heads.get(game.as_str()) {
                    Some(h) => h.clone(),
                    None => match &tree {
                        Some(t) => self.durable_head(game, t).map_err(failure)?,
                        None => None,
                    },
                };
                crate::event::check_link(&parsed.event, head.as_ref())
                    .map_err(|e| bad(format!("seq {seq} does not follow what the store holds: {e}")))?;
                heads.insert(game, Some(parsed.event.link()));
                lacking.push((parsed.event, bytes.clone()));
            }
            if !lacking.is_empty() {
                adds.push((game.clone(), lacking));
            }
        }
        Ok(adds)
    }

    /// Whether, after a crash that left a journal, what the newest
    /// checkpoint finds missing may be what the open puts right without
    /// touching what it signed: the journal's events (`adds`, after a log
    /// of `size` events) and the newest insert's subtrees, computed from
    /// its events (sled's flush on a timer may have written an insert the
    /// journal acknowledged only in part). So the log, once they are
    /// added, reaches the checkpoint, and each game's head at the
    /// checkpoint is in sled or among `adds`; then the only position the
    /// repair may undo (the newest insert's, cut short before its event)
    /// is one whose event the journal puts back. Otherwise the store lost
    /// what no journal holds, and the open stops before writing anything.
    /// (The signed root is checked by the check at the end of the open.)
    pub(super) fn journal_may_explain(&self, adds: &[Missing], size: u64) -> bool {
        let Ok(records) = crate::store::checkpoints::read(&self.dir) else { return false };
        let Some(Ok(newest)) = records.last().map(|r| r.checkpoint()) else { return false };
        let added: u64 = adds.iter().map(|(_, events)| events.len() as u64).sum();
        if size + added < newest.size {
            return false;
        }
        let mut heads: HashMap<&str, &(u64, String)> = HashMap::new();
        for r in &records {
            heads.extend(r.heads.iter().map(|(g, h)| (g.as_str(), h)));
        }
        heads.into_iter().all(|(game, (seq, hash))| {
            let in_journal = adds
                .iter()
                .any(|(g, events)| g == game && events.iter().any(|(e, _)| e.seq == *seq && e.hash == *hash));
            in_journal || self.get(game, *seq).ok().flatten().is_some_and(|e| e.hash == *hash)
        })
    }

    /// Inserts what `journal_adds` found sled lacks, each insert as an
    /// append would make it: the positions in the log come out as they were.
    pub(super) fn replay_journal(&self, shown: &str, adds: Vec<Missing>) -> Result<(), OpenError> {
        for (game, events) in adds {
            self.insert(&game, &events).map_err(|e| match e {
                AppendError::Io(why) => OpenError::Io { dir: shown.to_string(), why },
                e => damaged(shown, format!("the journal's events of game {game} could not be put back: {e}")),
            })?;
        }
        Ok(())
    }
}
