//! The columns an insert of events sends (`APPEND`, `INSERT_CHECKED`,
//! `batch::APPEND_MANY`), one array each, and what `APPEND` checks of an
//! append against its game's head (`follows_at`).

use super::big;
use crate::event::Event;

/// The columns of an insert of `events`, one array each.
#[derive(Default)]
pub(super) struct Rows<'a> {
    pub(super) seqs: Vec<i64>,
    pub(super) bytes: Vec<&'a [u8]>,
    /// Each event's hash (its `hash` member decoded), if it is 64 lowercase hex digits.
    pub(super) hashes: Vec<Option<Vec<u8>>>,
    /// Each event's time in nanoseconds since 1970, if it is within i64's.
    pub(super) ats: Vec<Option<i64>>,
}

impl<'a> Rows<'a> {
    pub(super) fn of(events: &'a [(Event, Vec<u8>)]) -> Rows<'a> {
        let mut rows = Rows::default();
        rows.extend(events);
        rows
    }

    /// `events`' columns after those already here (`batch`: many games').
    pub(super) fn extend(&mut self, events: &'a [(Event, Vec<u8>)]) {
        self.seqs.extend(events.iter().map(|(e, _)| big(e.seq)));
        self.bytes.extend(events.iter().map(|(_, b)| b.as_slice()));
        self.hashes.extend(events.iter().map(|(e, _)| hash_bytes(&e.hash)));
        self.ats.extend(events.iter().map(|(e, _)| at_ns(&e.at)));
    }
}

/// What `APPEND` checks of a game's append against its head (`follows_at`):
/// its first's `prev` hash as bytes, and its time.
pub(super) type Check = (Vec<u8>, i64);

/// A hash in hex as its 32 bytes, if it is one as events write it (lowercase).
fn hash_bytes(hex: &str) -> Option<Vec<u8>> {
    if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        return None;
    }
    let hash = blake3::Hash::from_hex(hex).ok()?;
    Some(hash.as_bytes().to_vec())
}

/// An event's time in nanoseconds since 1970, if it has one that fits.
fn at_ns(at: &str) -> Option<i64> {
    crate::event::parse_time(at).ok()?.timestamp_nanos_opt()
}

/// What `APPEND` checks against the head for `events` (its first's `prev`
/// hash as bytes and its time), once every later one is checked to link
/// to the one before it and event 0 to nothing, as `check_follows` checks
/// them. None when one of those does not hold, or a hash or time does not
/// fit a column: the caller reads the head and `check_follows` says why.
pub(super) fn follows_at(events: &[(Event, Vec<u8>)]) -> Option<Check> {
    let first = &events.first()?.0;
    if first.seq == 0 && crate::event::check_link(first, None).is_err() {
        return None;
    }
    for pair in events.windows(2) {
        crate::event::check_link(&pair[1].0, Some(&pair[0].0.link())).ok()?;
    }
    Some((hash_bytes(&first.prev)?, at_ns(&first.at)?))
}
