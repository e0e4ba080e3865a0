//! The event: one immutable, hashed, chained record of one action.
//!
//! ```text
//! {"action":{...,"type":"play"},"actor":"p1","at":"2026-11-21T15:03:10.123Z",
//!  "hash":"<blake3 hex>","prev":"<hash of seq-1>","seq":7,"v":1}
//! ```
//!
//! `hash` is BLAKE3 over the RFC 8785 canonical JSON of the event without its
//! `hash` field; the stored and exported bytes are the canonical JSON of the
//! whole event. So `jq -cS 'del(.hash)' | tr -d '\n' | b3sum` reproduces it.
//! Events carry no game name: a game name is a ref to a stream.

use std::collections::BTreeSet;
use std::io::Write;

use chrono::{DateTime, SecondsFormat, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::json::{canonical, parse_strict};
use crate::limits::*;

/// `prev` of event 0.
pub const ZERO_HASH: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// One stored event. Field names are the wire format.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "arbiter event", description = "One immutable, hashed, chained record of one action.")]
pub struct Event {
    /// Format version, always 1.
    pub v: u64,
    /// Position in the stream: 0, 1, 2, ... without gaps.
    pub seq: u64,
    /// `hash` of event seq-1, 64 lowercase hex; 64 zeros for event 0.
    #[schemars(regex(pattern = "^[0-9a-f]{64}$"))]
    pub prev: String,
    /// RFC 3339 UTC time of the append (or as transcribed by a judge). Reducers never read it.
    pub at: String,
    /// Seat id or judge name that performed the action.
    pub actor: String,
    /// The action: an object whose `type` is one of the kernel's action types;
    /// the rest is the ruleset's payload (see schemas/<ruleset>/).
    #[schemars(with = "ActionObject")]
    pub action: Value,
    /// BLAKE3 of the canonical JSON of this event without `hash`, 64 lowercase hex.
    #[schemars(regex(pattern = "^[0-9a-f]{64}$"))]
    pub hash: String,
}

/// The schema view of an action: a `type` plus the ruleset's fields.
#[derive(JsonSchema)]
#[allow(dead_code)]
struct ActionObject {
    #[serde(rename = "type")]
    kind: ActionType,
    #[serde(flatten)]
    payload: Map<String, Value>,
}

/// The kernel's action types. A ruleset defines the payload of each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ActionType {
    /// Event 0 only: the game header.
    Open,
    /// Something a player declares (attacker and defender, a battle tactic...).
    Announce,
    /// A card effect.
    Play,
    /// A card effect that nullifies an earlier play (names its seq).
    Counter,
    /// Giving up the chance to act in a window.
    Pass,
    /// What the table determined at a step (standings, results, points), or a judge's ruling.
    Resolve,
    /// A judge's ruling about an earlier event (rewind, decide, penalty, add_judge).
    Ruling,
    /// An annotation of an earlier event by any seat or judge.
    Note,
}

impl ActionType {
    pub const ALL: [ActionType; 8] = [
        ActionType::Open,
        ActionType::Announce,
        ActionType::Play,
        ActionType::Counter,
        ActionType::Pass,
        ActionType::Resolve,
        ActionType::Ruling,
        ActionType::Note,
    ];
    pub fn name(self) -> &'static str {
        match self {
            ActionType::Open => "open",
            ActionType::Announce => "announce",
            ActionType::Play => "play",
            ActionType::Counter => "counter",
            ActionType::Pass => "pass",
            ActionType::Resolve => "resolve",
            ActionType::Ruling => "ruling",
            ActionType::Note => "note",
        }
    }
    pub fn parse(s: &str) -> Option<ActionType> {
        Self::ALL.into_iter().find(|t| t.name() == s)
    }
}

/// The header, carried by event 0 (`{"type":"open", ...}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Header {
    /// Always "open".
    #[serde(rename = "type")]
    pub kind: OpenTag,
    /// Ruleset name, e.g. "doomtrooper".
    pub ruleset: String,
    /// Ruleset version the game was recorded under; a replay uses these rules.
    pub ruleset_version: u64,
    /// Seats in table order (this order is "other players" order where a text says so).
    pub seats: Vec<Seat>,
    /// Judges by name. A judge may act as `actor` wherever a ruleset allows judges.
    #[serde(default)]
    pub judges: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tournament: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table: Option<u64>,
    /// Ruleset options fixed for the whole game (e.g. Riftbound's mode and
    /// battlefields); each ruleset documents and checks its own.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub options: Map<String, Value>,
}

/// The literal tag `"open"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OpenTag {
    Open,
}

/// One seat at the table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Seat {
    /// Short id used as `actor`: letters, digits, '-' and '_' (e.g. "p1").
    #[schemars(regex(pattern = "^[A-Za-z0-9_-]{1,32}$"))]
    pub id: String,
    /// The player's name.
    pub name: String,
}

impl Header {
    /// Checks the header on its own (the ruleset checks its own needs).
    pub fn check(&self) -> Result<(), String> {
        if self.seats.is_empty() || self.seats.len() > MAX_SEATS {
            return Err(format!("a game needs 1 to {MAX_SEATS} seats"));
        }
        if self.judges.len() > MAX_JUDGES {
            return Err(format!("at most {MAX_JUDGES} judges"));
        }
        let mut actors = BTreeSet::new();
        for seat in &self.seats {
            if !valid_seat_id(&seat.id) {
                return Err(format!("seat id {:?} must be 1 to 32 letters, digits, '-' or '_'", seat.id));
            }
            check_name("player name", &seat.name)?;
            if !actors.insert(seat.id.as_str()) {
                return Err(format!("seat {:?} is listed twice", seat.id));
            }
        }
        for judge in &self.judges {
            check_name("judge name", judge)?;
            if !actors.insert(judge.as_str()) {
                return Err(format!(
                    "judge {judge:?} has the same name as a seat or another judge; every actor must be unique"
                ));
            }
        }
        Ok(())
    }

    pub fn is_seat(&self, actor: &str) -> bool {
        self.seats.iter().any(|s| s.id == actor)
    }
    pub fn is_judge(&self, actor: &str) -> bool {
        self.judges.iter().any(|j| j == actor)
    }
    pub fn seat_ids(&self) -> Vec<String> {
        self.seats.iter().map(|s| s.id.clone()).collect()
    }

    /// A seat by name and id ("Alice (p1)"); anyone else (a judge) as named.
    pub fn name_of(&self, id: &str) -> String {
        match self.seats.iter().find(|s| s.id == id) {
            // Built by hand: boards call this for every line, and `format!`
            // costs several times as much (`concat` of the four pieces,
            // twice as much as this by callgrind: it measures them first).
            Some(s) => {
                let mut name = String::with_capacity(s.name.len() + s.id.len() + 3);
                name.push_str(&s.name);
                name.push_str(" (");
                name.push_str(&s.id);
                name.push(')');
                name
            }
            None => id.to_string(),
        }
    }
}

pub fn valid_seat_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 32 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Names (players, judges, cards, warriors): non-empty, trimmed, bounded.
pub fn check_name(what: &str, name: &str) -> Result<(), String> {
    if name.trim().is_empty() || name.trim() != name {
        return Err(format!("{what} {name:?} must be non-empty with no leading or trailing spaces"));
    }
    if name.len() > MAX_NAME_BYTES {
        return Err(format!("{what} is longer than {MAX_NAME_BYTES} bytes"));
    }
    Ok(())
}

/// Game names are refs: 1-64 of letters, digits, '.', '-', '_', not starting with '.'.
pub fn check_game_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= MAX_GAME_NAME_BYTES
        && !name.starts_with('.')
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "game name {name:?} must be 1 to {MAX_GAME_NAME_BYTES} letters, digits, '.', '-' or '_', not starting with '.'"
        ))
    }
}

/// What is wrong with one event of a record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EventError {
    #[error("not a valid event: {0}")]
    Malformed(String),
    #[error("format version {0} is not supported (this arbiter reads version {FORMAT_VERSION})")]
    Version(u64),
    #[error("seq is {found}, expected {expected} (events missing, repeated or out of order)")]
    Seq { expected: u64, found: u64 },
    #[error(
        "prev does not match the hash of the event before it (a broken link: an event was changed, removed or reordered)"
    )]
    Link,
    #[error("hash does not match the event's content (the event was changed after it was recorded)")]
    Hash,
    #[error("time {at} is earlier than the event before it ({prev_at}); times never go backwards")]
    TimeBackwards { at: String, prev_at: String },
    #[error("time {0:?} is not an RFC 3339 UTC time like 2026-11-21T15:03:10Z")]
    Time(String),
    #[error(
        "time {at} is later than the store's clock ({now}) by more than {MAX_CLOCK_SKEW_SECONDS} s; a supplied time transcribes the past"
    )]
    TimeInFuture { at: String, now: String },
    #[error("event is {0} bytes; the limit is {MAX_EVENT_BYTES}")]
    TooLarge(usize),
    #[error("the stream is full: at most {MAX_STREAM_EVENTS} events")]
    StreamFull,
}

/// An event before it is sealed: what an append supplies.
#[derive(Debug, Clone, PartialEq)]
pub struct Draft {
    pub actor: String,
    pub action: Value,
    /// Set by the store at append time unless a judge transcribes a paper record.
    pub at: Option<String>,
}

/// The parts of the event before it that sealing and checking need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    pub seq: u64,
    pub hash: String,
    pub at: String,
}

/// Seals a draft onto the stream after `prev` (None for event 0): sets seq,
/// prev and at, computes the hash. Returns the event and its canonical bytes.
pub fn seal(draft: &Draft, prev: Option<&Link>, now: DateTime<Utc>) -> Result<(Event, Vec<u8>), EventError> {
    let seq = prev.map_or(0, |p| p.seq + 1);
    if seq >= MAX_STREAM_EVENTS {
        return Err(EventError::StreamFull);
    }
    let at = match &draft.at {
        Some(at) => {
            if parse_time(at)? > now + chrono::TimeDelta::seconds(MAX_CLOCK_SKEW_SECONDS) {
                return Err(EventError::TimeInFuture { at: at.clone(), now: format_time(now) });
            }
            at.clone()
        }
        None => {
            // The store's clock may step back (NTP); a stream's times never do.
            let now = format_time(now);
            match prev {
                Some(p) if parse_time(&p.at)? > parse_time(&now)? => p.at.clone(),
                _ => now,
            }
        }
    };
    let event = Event {
        v: FORMAT_VERSION,
        seq,
        prev: prev.map_or(ZERO_HASH.to_string(), |p| p.hash.clone()),
        at,
        actor: draft.actor.clone(),
        action: draft.action.clone(),
        hash: String::new(),
    };
    check_strict(&event, false)?;
    // Canonical once: hash the event without `hash`, then put the member in
    // its sorted place (after "at", before "prev").
    let (unhashed, hash_at) = canonical_without_hash(&event);
    let hash = blake3::hash(&unhashed).to_hex().to_string();
    let bytes = with_hash(&unhashed, hash_at, &hash);
    let event = Event { hash, ..event };
    if bytes.len() > MAX_EVENT_BYTES {
        return Err(EventError::TooLarge(bytes.len()));
    }
    check_link(&event, prev)?;
    Ok((event, bytes))
}

/// Checks `event` against the strict rules as `json::check_value` checks
/// it built as a `Value` (with its `hash` member, or without), member by
/// member in key order, so that the first refusal is the same, in the
/// same words.
fn check_strict(event: &Event, with_hash: bool) -> Result<(), EventError> {
    let strict = |checked: Result<(), crate::json::JsonError>| checked.map_err(|e| EventError::Malformed(e.0));
    strict(crate::json::check_member(&event.action))?;
    strict(crate::json::check_str(&event.actor))?;
    strict(crate::json::check_str(&event.at))?;
    if with_hash {
        strict(crate::json::check_str(&event.hash))?;
    }
    strict(crate::json::check_str(&event.prev))?;
    strict(crate::json::check_u64(event.seq))?;
    strict(crate::json::check_u64(event.v))
}

/// The canonical JSON (RFC 8785) of `event` without its `hash` member, and
/// the offset where that member goes (after "at", before "prev"). Written member by member, in key
/// order, straight from the event: building it as a `Value` first copied
/// the action and allocated every member, and was most of sealing's work
/// (perf, 64 tables). The bytes are those of `json::canonical` of the
/// event as a `Value` (`tests/props.rs` checks it over random events and
/// every sample).
fn canonical_without_hash(event: &Event) -> (Vec<u8>, usize) {
    // Every member named: one added to `Event` does not compile until it is written here.
    let Event { v, seq, prev, at, actor, action, hash: _ } = event;
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(b"{\"action\":");
    crate::json::write_canonical_to(&mut out, action);
    out.extend_from_slice(b",\"actor\":");
    crate::json::write_string(&mut out, actor);
    out.extend_from_slice(b",\"at\":");
    crate::json::write_string(&mut out, at);
    let hash_at = out.len();
    out.extend_from_slice(b",\"prev\":");
    crate::json::write_string(&mut out, prev);
    write!(out, ",\"seq\":{seq},\"v\":{v}}}").expect("writing to a Vec cannot fail");
    (out, hash_at)
}

/// `unhashed` (from `canonical_without_hash`) with the member `"hash"`
/// put in at `hash_at`.
fn with_hash(unhashed: &[u8], hash_at: usize, hash: &str) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(unhashed.len() + hash.len() + 10);
    bytes.extend_from_slice(&unhashed[..hash_at]);
    bytes.extend_from_slice(b",\"hash\":");
    crate::json::write_string(&mut bytes, hash);
    bytes.extend_from_slice(&unhashed[hash_at..]);
    bytes
}

/// The canonical bytes of an event (what is stored, hashed and exported):
/// its RFC 8785 canonical JSON, its hash as it is.
pub fn canonical_bytes(event: &Event) -> Vec<u8> {
    let (unhashed, hash_at) = canonical_without_hash(event);
    with_hash(&unhashed, hash_at, &event.hash)
}

/// `canonical_bytes` once the event passes the strict rules: what the
/// store checks an incoming event's bytes against.
pub fn canonical_event(event: &Event) -> Result<Vec<u8>, EventError> {
    check_strict(event, true)?;
    Ok(canonical_bytes(event))
}

/// BLAKE3 of an event from its canonical bytes alone: the hash of the same
/// bytes with the top-level `hash` member cut out, which is the canonical
/// JSON of the event without `hash` (what `jq -cS 'del(.hash)' | b3sum`
/// hashes). None when the bytes hold no `hash` member. The bytes must be
/// canonical (check that first): the store checks each append and each read
/// with this, without decoding the event again.
pub fn hash_of_canonical(bytes: &[u8]) -> Option<blake3::Hash> {
    crate::json::hash_without_member(bytes, "hash")
}

/// Parses one event from text (a stored value, an export line) and checks
/// it on its own: strict JSON, envelope shape, version, size, hash.
/// Returns the event and its canonical bytes.
pub fn decode(text: &str) -> Result<(Event, Vec<u8>), EventError> {
    let value = parse_strict(text).map_err(|e| EventError::Malformed(e.0))?;
    let bytes = canonical(&value);
    let event: Event = serde_json::from_value(value).map_err(|e| EventError::Malformed(e.to_string()))?;
    event.check_envelope()?;
    check_canonical_bytes(&event, &bytes)?;
    Ok((event, bytes))
}

/// An event read from bytes that must be its canonical JSON (a stored
/// value), with its time parsed once for the link to the next event.
/// Checked but for its hash: `check_stored` does that, maybe on another
/// thread (see `record::verify`).
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    pub event: Event,
    pub at: DateTime<Utc>,
    /// Where the `hash` member is in the bytes, if the parse found it.
    hash_member: Option<(usize, usize)>,
}

/// The first half of reading a stored event: UTF-8, strict JSON in its
/// canonical form, the envelope. Canonical strict bytes (every stored event
/// that is whole) are checked on the bytes and parsed straight into the
/// event, once; anything else takes `decode`, which says exactly what is
/// wrong (the same errors, in the same order, as reading an event always
/// gave: `decode`'s, then "not canonical").
pub fn parse_stored(bytes: &[u8]) -> Result<Parsed, EventError> {
    let text = std::str::from_utf8(bytes).map_err(|_| EventError::Malformed("not UTF-8".into()))?;
    if let Some(hash_member) = crate::json::canonical_strict_member(text, Some("hash"))
        && let Ok(event) = serde_json::from_str::<Event>(text)
        && let Ok(at) = event.check_envelope()
    {
        return Ok(Parsed { event, at, hash_member });
    }
    let (event, canonical) = decode(text)?;
    if canonical != bytes {
        return Err(EventError::Malformed("stored bytes are not canonical".into()));
    }
    let at = event.check_envelope()?;
    Ok(Parsed { event, at, hash_member: None })
}

/// The second half: the size and the hash of the bytes, and the seq the
/// event is stored under.
pub fn check_stored(parsed: &Parsed, seq: u64, bytes: &[u8]) -> Result<(), EventError> {
    let member = parsed.hash_member.or_else(|| crate::json::top_level_member(bytes, "hash"));
    check_hash(&parsed.event, bytes, member)?;
    if parsed.event.seq != seq {
        return Err(EventError::Seq { expected: seq, found: parsed.event.seq });
    }
    Ok(())
}

/// Checks an event's canonical bytes: the size limit, and its hash against
/// the bytes without it.
pub fn check_canonical_bytes(event: &Event, bytes: &[u8]) -> Result<(), EventError> {
    check_hash(event, bytes, crate::json::top_level_member(bytes, "hash"))
}

/// `check_canonical_bytes` with the `hash` member already found in the bytes.
fn check_hash(event: &Event, bytes: &[u8], hash_member: Option<(usize, usize)>) -> Result<(), EventError> {
    if bytes.len() > MAX_EVENT_BYTES {
        return Err(EventError::TooLarge(bytes.len()));
    }
    match hash_member.map(|member| crate::json::hash_without(bytes, member)) {
        Some(hash) if hash.to_hex().as_str() == event.hash => Ok(()),
        _ => Err(EventError::Hash),
    }
}

/// Checks that `event` follows `prev` (None: it must be event 0).
pub fn check_link(event: &Event, prev: Option<&Link>) -> Result<(), EventError> {
    check_position(event, prev)?;
    match prev {
        Some(p) => check_order(event, parse_time(&event.at)?, p, parse_time(&p.at)?),
        None => Ok(()),
    }
}

/// The link's seq and hash.
fn check_position(event: &Event, prev: Option<&Link>) -> Result<(), EventError> {
    let expected = prev.map_or(0, |p| p.seq + 1);
    if event.seq != expected {
        return Err(EventError::Seq { expected, found: event.seq });
    }
    let prev_hash = prev.map_or(ZERO_HASH, |p| p.hash.as_str());
    if event.prev != prev_hash {
        return Err(EventError::Link);
    }
    Ok(())
}

/// The link's times: never backwards.
fn check_order(event: &Event, at: DateTime<Utc>, prev: &Link, prev_at: DateTime<Utc>) -> Result<(), EventError> {
    if at < prev_at {
        return Err(EventError::TimeBackwards { at: event.at.clone(), prev_at: prev.at.clone() });
    }
    Ok(())
}

/// A stream being read in order: the last event checked, with its time
/// parsed once, which the next one must link to (`check_link`'s checks).
#[derive(Debug, Clone, Default)]
pub struct Chain {
    prev: Option<Link>,
    /// The time of `prev`, once parsed.
    prev_at: Option<DateTime<Utc>>,
}

impl Chain {
    /// A stream read from after `prev` (None: from event 0).
    pub fn after(prev: Option<Link>) -> Chain {
        Chain { prev, prev_at: None }
    }

    /// Checks that `event`, whose time is `at`, follows the last event
    /// checked, and makes it the last.
    pub fn push(&mut self, event: &Event, at: DateTime<Utc>) -> Result<(), EventError> {
        check_position(event, self.prev.as_ref())?;
        if let Some(prev) = &self.prev {
            let prev_at = match self.prev_at {
                Some(t) => t,
                None => parse_time(&prev.at)?,
            };
            check_order(event, at, prev, prev_at)?;
        }
        self.prev = Some(event.link());
        self.prev_at = Some(at);
        Ok(())
    }

    /// `push` for an event whose time is not parsed yet: the time is
    /// checked after the seq and the hash, as `check_link` does.
    pub fn push_event(&mut self, event: &Event) -> Result<(), EventError> {
        check_position(event, self.prev.as_ref())?;
        let at = match &self.prev {
            Some(_) => parse_time(&event.at)?,
            // Event 0 links to nothing: its time is not checked here.
            None => match parse_time(&event.at) {
                Ok(at) => at,
                Err(_) => {
                    self.prev = Some(event.link());
                    self.prev_at = None;
                    return Ok(());
                }
            },
        };
        self.push(event, at)
    }

    /// The last event checked.
    pub fn last(&self) -> Option<&Link> {
        self.prev.as_ref()
    }

    pub fn into_last(self) -> Option<Link> {
        self.prev
    }
}

impl Event {
    /// The envelope on its own: version, an action with a string `type`,
    /// the time (returned, parsed).
    pub fn check_envelope(&self) -> Result<DateTime<Utc>, EventError> {
        if self.v != FORMAT_VERSION {
            return Err(EventError::Version(self.v));
        }
        if !self.action.is_object() || self.action.get("type").and_then(Value::as_str).is_none() {
            return Err(EventError::Malformed("action must be an object with a string \"type\"".into()));
        }
        parse_time(&self.at)
    }

    pub fn link(&self) -> Link {
        Link { seq: self.seq, hash: self.hash.clone(), at: self.at.clone() }
    }
    pub fn action_type(&self) -> Option<ActionType> {
        self.action.get("type").and_then(Value::as_str).and_then(ActionType::parse)
    }
}

/// Times are RFC 3339 in UTC ("Z" or "+00:00").
pub fn parse_time(at: &str) -> Result<DateTime<Utc>, EventError> {
    let t = DateTime::parse_from_rfc3339(at).map_err(|_| EventError::Time(at.to_string()))?;
    if t.offset().local_minus_utc() != 0 {
        return Err(EventError::Time(at.to_string()));
    }
    Ok(t.with_timezone(&Utc))
}

pub fn format_time(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn t0() -> DateTime<Utc> {
        parse_time("2026-11-21T15:00:00Z").unwrap()
    }

    #[test]
    fn seal_then_decode_round_trips_and_chains() {
        let d0 = Draft { actor: "p1".into(), action: json!({"type": "pass"}), at: None };
        let (e0, b0) = seal(&d0, None, t0()).unwrap();
        assert_eq!(e0.prev, ZERO_HASH);
        // Sealing writes the canonical JSON once and splices `hash` in: the
        // same bytes as the whole event written canonically.
        assert_eq!(b0, canonical(&serde_json::to_value(&e0).unwrap()));
        assert_eq!(hash_of_canonical(&b0).unwrap().to_hex().as_str(), e0.hash);
        let (back, bytes) = decode(std::str::from_utf8(&b0).unwrap()).unwrap();
        assert_eq!(back, e0);
        assert_eq!(bytes, b0);
        let (e1, _) = seal(&d0, Some(&e0.link()), t0()).unwrap();
        assert_eq!(e1.seq, 1);
        assert_eq!(e1.prev, e0.hash);
        check_link(&e1, Some(&e0.link())).unwrap();
        assert_eq!(check_link(&e1, None), Err(EventError::Seq { expected: 0, found: 1 }));
    }

    #[test]
    fn times_never_go_backwards() {
        let d = Draft { actor: "p1".into(), action: json!({"type": "pass"}), at: None };
        let (e0, _) = seal(&d, None, t0()).unwrap();
        // The clock stepped back an hour: the stream keeps the later time.
        let (e1, _) = seal(&d, Some(&e0.link()), t0() - chrono::Duration::hours(1)).unwrap();
        assert_eq!(e1.at, e0.at);
        let early = Draft { at: Some("2020-01-01T00:00:00Z".into()), ..d };
        assert!(matches!(seal(&early, Some(&e0.link()), t0()), Err(EventError::TimeBackwards { .. })));
    }
}
