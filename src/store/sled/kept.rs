//! Settings read from memory: the server reads a token's setting on every
//! request, and sled 0.34 makes every read wait while a transaction runs
//! (its global `concurrency_control` lock, taken for writing by each
//! `write_back`, 10 to 15 ms at 64 tables). With both of the server's
//! async threads waiting in a token check, every table stalled for that
//! long, and those stalls were most of the API's slowest appends.
//!
//! This process is sled's only writer, and every write of a setting goes
//! through `SledStore::put_setting` or `swap_setting`: one at a time
//! (`writing`), each telling this (`written`) what sled then holds for
//! its key. A read that misses asks sled, and keeps what it got only if
//! no write came meanwhile (`writes`), so it never keeps a value older
//! than one a write already told. Only settings that exist are kept: a
//! read of an absent key (an unknown token) asks sled each time, so that
//! unknown tokens cannot push the known ones out.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use crate::limits::MAX_KEPT_SETTINGS;

#[derive(Default)]
pub struct KeptSettings {
    kept: Mutex<Kept>,
    /// Held by a writer across its write to sled and `written`.
    writing: Mutex<()>,
}

#[derive(Default)]
struct Kept {
    /// Settings read or written, with sled's value.
    values: HashMap<String, Vec<u8>>,
    /// How many writes were told: a read that began before one does not
    /// keep what it read.
    writes: u64,
}

impl KeptSettings {
    /// The value kept for `key`, or `None` if it is not kept: then ask
    /// sled, with `writes()` taken first.
    pub fn get(&self, key: &str) -> Option<Vec<u8>> {
        self.lock().values.get(key).cloned()
    }

    /// The count of writes so far, taken before a read of sled.
    pub fn writes(&self) -> u64 {
        self.lock().writes
    }

    /// Keeps what sled gave for `key` in a read that began at `writes`,
    /// unless a write came since (its value may be newer than the read's).
    pub fn keep(&self, key: &str, value: Option<&[u8]>, writes: u64) {
        let mut kept = self.lock();
        if let (Some(value), true) = (value, kept.writes == writes) {
            kept.insert(key, value);
        }
    }

    /// The lock a writer holds across its write to sled and `written`, so
    /// that two writes of one key are told in the order sled took them.
    pub fn writing(&self) -> MutexGuard<'_, ()> {
        self.writing.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sled now holds `value` for `key` (`None`: nothing).
    pub fn written(&self, key: &str, value: Option<&[u8]>) {
        let mut kept = self.lock();
        kept.writes += 1;
        match value {
            Some(value) => kept.insert(key, value),
            None => {
                kept.values.remove(key);
            }
        }
    }

    fn lock(&self) -> MutexGuard<'_, Kept> {
        self.kept.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Kept {
    /// At most `MAX_KEPT_SETTINGS` keys: past it, all are forgotten and
    /// read from sled again as they are asked for.
    fn insert(&mut self, key: &str, value: &[u8]) {
        if self.values.len() >= MAX_KEPT_SETTINGS && !self.values.contains_key(key) {
            self.values.clear();
        }
        self.values.insert(key.to_string(), value.to_vec());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_that_began_before_a_write_keeps_nothing() {
        let kept = KeptSettings::default();
        assert_eq!(kept.get("k"), None);
        let began = kept.writes();
        // A write lands while the read is asking sled for the old value.
        kept.written("k", Some(b"new"));
        kept.keep("k", Some(b"old"), began);
        assert_eq!(kept.get("k"), Some(b"new".to_vec()));
        // A read with no write meanwhile keeps what it read; an absent
        // key is not kept.
        let began = kept.writes();
        kept.keep("other", Some(b"1"), began);
        kept.keep("absent", None, began);
        assert_eq!((kept.get("other"), kept.get("absent")), (Some(b"1".to_vec()), None));
        assert_eq!(kept.lock().values.len(), 2);
        kept.written("k", None);
        assert_eq!(kept.get("k"), None);
    }

    #[test]
    fn past_the_limit_all_are_forgotten_and_the_newest_kept() {
        let kept = KeptSettings::default();
        for i in 0..MAX_KEPT_SETTINGS {
            kept.keep(&format!("k{i}"), Some(&[1]), kept.writes());
        }
        assert_eq!(kept.get("k0"), Some(vec![1]));
        kept.keep("one more", Some(&[2]), kept.writes());
        assert_eq!((kept.get("k0"), kept.get("one more")), (None, Some(vec![2])));
        assert_eq!(kept.lock().values.len(), 1);
    }
}
