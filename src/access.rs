//! Who may do what on the server: bearer tokens, the roles they carry, and
//! whether a game can be read without one.
//!
//! - The **organiser** creates, imports and forks games, issues, lists and
//!   revokes tokens and sets read access. An organiser does not act in
//!   games. There is one organiser token at a time: issuing a new one
//!   (`arbiter token --organiser`, on the store's machine) revokes the
//!   ones before it.
//! - A **seat** token lets that seat append as itself in one game.
//! - A **judge** token lets that judge append as themself (actions a judge
//!   may take, rulings and notes) in one game. The rules, not the token,
//!   decide that only judges may rule.
//! - Reading a game is open to anyone when its access is `public`, else to
//!   the organiser and the game's token holders.
//!
//! A token is 32 random bytes, shown once, as hex. The store keeps only its
//! BLAKE3 hash (a stolen store does not yield tokens), under
//! `token/<hash>`, with the grant, when it was issued, when it expires and
//! when it was revoked, as JSON. Its public **id** is the first 16 hex
//! digits of that hash: it names the token in lists and revocations
//! without being the secret. These are settings, not events: tokens are
//! not part of a game's record.
//!
//! Nothing here reads the clock: the server and the CLI pass `now`.

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::event::{check_game_name, format_time, parse_time};
use crate::record::{RecordError, Recorder};
use crate::store::Store;

const TOKEN_PREFIX: &str = "token/";
const READ_PREFIX: &str = "read/";

/// How long a seat's or a judge's token works unless the organiser says
/// otherwise (`--expires`). The issue asks that a token for a round expire
/// with it, but nothing records when a round ends (the header's `round` is
/// a number, and a game has no closing event), so the default is a fixed
/// lifetime: a day is longer than any round with its appeals and a late
/// result entry, and a token left in a browser's history or on a score
/// sheet is dead by the next day's rounds. An organiser's token does not
/// expire: it is replaced (rotated) instead.
pub const TOKEN_LIFETIME: Duration = Duration::hours(24);

/// The longest lifetime `--expires` takes as a duration (ten years), so the
/// arithmetic cannot overflow.
const MAX_LIFETIME_DAYS: i64 = 3650;

/// Hex digits of a token's public id: 64 bits of its hash, enough that two
/// tokens of one store never share one, and nothing about the token.
pub const ID_LEN: usize = 16;

/// What a token lets its holder do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Grant {
    Organiser,
    Seat {
        game: String,
        seat: String,
    },
    Judge {
        game: String,
        judge: String,
    },
    /// A token the pages sent as their cookie (see `server::page`): it
    /// reads what its token reads. A cookie goes with every request the
    /// browser makes to the server, so it creates and issues nothing (those
    /// take the bearer header), and it appends as its seat or judge only
    /// from this server's own pages (`server::events::may_append`). Never
    /// stored.
    #[serde(skip)]
    Cookie(Box<Grant>),
}

impl Grant {
    /// The actor this grant appends as in `game`, if any.
    pub fn actor_in(&self, game: &str) -> Option<&str> {
        match self {
            Grant::Seat { game: g, seat } if g == game => Some(seat),
            Grant::Judge { game: g, judge } if g == game => Some(judge),
            _ => None,
        }
    }

    /// May the holder read `game` when its access is token-only?
    pub fn may_read(&self, game: &str) -> bool {
        match self {
            Grant::Cookie(inner) => inner.may_read(game),
            _ => matches!(self, Grant::Organiser) || self.actor_in(game).is_some(),
        }
    }

    pub fn is_organiser(&self) -> bool {
        matches!(self, Grant::Organiser)
    }

    /// The game this grant is for (None for the organiser).
    pub fn game(&self) -> Option<&str> {
        match self {
            Grant::Organiser => None,
            Grant::Seat { game, .. } | Grant::Judge { game, .. } => Some(game),
            Grant::Cookie(inner) => inner.game(),
        }
    }
}

/// Who may read a game.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReadAccess {
    /// Anyone, without a token (spectators, the replay page).
    #[default]
    Public,
    /// The organiser and the game's seats and judges.
    Token,
}

/// A token as the store keeps it. A token issued before times were kept
/// has none of them (and never expires).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Kept {
    #[serde(flatten)]
    grant: Grant,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    issued: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    expires: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    revoked: Option<String>,
}

/// Whether a token works now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    Active,
    Expired,
    Revoked,
}

/// A token as the organiser sees it: everything but the token.
#[derive(Debug, Clone, Serialize)]
pub struct Listed {
    pub id: String,
    #[serde(flatten)]
    pub grant: Grant,
    pub issued: Option<String>,
    pub expires: Option<String>,
    pub revoked: Option<String>,
    pub state: State,
}

/// What a token is worth now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    /// It works: its grant, and when it expires.
    Valid(Grant, Option<DateTime<Utc>>),
    /// This store never issued it.
    Unknown,
    /// Revoked at this time.
    Revoked(String),
    /// Expired at this time.
    Expired(String),
}

/// A newly issued token, shown once.
#[derive(Debug, Clone, Serialize)]
pub struct Issued {
    pub token: String,
    #[serde(flatten)]
    pub listed: Listed,
    /// The ids of the organiser tokens this one replaced (revoked).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub replaced: Vec<String>,
}

fn hash_hex(token: &str) -> String {
    blake3::hash(token.as_bytes()).to_hex().to_string()
}

/// A token's public id: the first `ID_LEN` hex digits of its hash.
pub fn id_of(token: &str) -> String {
    hash_hex(token)[..ID_LEN].to_string()
}

/// A new random token: 32 bytes from the operating system, as hex.
fn new_token() -> Result<String, RecordError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| RecordError::Io(format!("no randomness for a token: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// A seat must be a seat of the game, a judge one of its judges now
/// (including judges added by a ruling).
fn check_grant(store: &dyn Store, grant: &Grant) -> Result<(), RecordError> {
    match grant {
        Grant::Organiser => Ok(()),
        Grant::Seat { game, seat } => {
            let recorder = Recorder::load(store, game)?;
            match recorder.table().header.seats.iter().any(|s| &s.id == seat) {
                true => Ok(()),
                false => Err(RecordError::Input(format!("{seat:?} is not a seat of {game}"))),
            }
        }
        Grant::Judge { game, judge } => {
            let recorder = Recorder::load(store, game)?;
            match recorder.table().check_judge(judge) {
                Ok(_) => Ok(()),
                Err(_) => Err(RecordError::Input(format!("{judge:?} is not a judge of {game}"))),
            }
        }
        Grant::Cookie(_) => Err(RecordError::Input("a cookie's grant is not issued".into())),
    }
}

/// When a token for `grant` issued at `now` expires, from what the
/// organiser wrote (`--expires`, or `expires` in the API): None, the
/// default (`TOKEN_LIFETIME` for a seat or a judge; never for the
/// organiser); `never`; a duration (`30m`, `12h`, `7d`); or an RFC 3339
/// UTC time, after `now` and at most `MAX_LIFETIME_DAYS` after it (the
/// same cap as a duration: a time already past would issue a dead token).
pub fn expiry(grant: &Grant, text: Option<&str>, now: DateTime<Utc>) -> Result<Option<DateTime<Utc>>, RecordError> {
    let organiser = grant.is_organiser();
    let Some(text) = text else {
        return Ok(if organiser { None } else { Some(now + TOKEN_LIFETIME) });
    };
    if organiser {
        return Err(RecordError::Input(
            "an organiser's token does not expire: issue a new one to replace it (arbiter token --organiser)".into(),
        ));
    }
    let bad = || {
        RecordError::Input(format!(
            "expires is \"never\", a duration such as 30m, 12h or 7d (at most {MAX_LIFETIME_DAYS}d), or an RFC 3339 UTC time, not {text:?}"
        ))
    };
    if text == "never" {
        return Ok(None);
    }
    if let Ok(t) = parse_time(text) {
        if t <= now {
            return Err(RecordError::Input(format!(
                "expires {text:?} is already past (it is {} now): a token must expire after it is issued",
                format_time(now)
            )));
        }
        if t - now > Duration::days(MAX_LIFETIME_DAYS) {
            return Err(RecordError::Input(format!(
                "expires {text:?} is more than {MAX_LIFETIME_DAYS} days from now ({}), the longest a token may last; use \"never\" for a token that does not expire",
                format_time(now)
            )));
        }
        return Ok(Some(t));
    }
    let split = text.len().checked_sub(1).filter(|&i| text.is_char_boundary(i)).ok_or_else(bad)?;
    let (number, unit) = text.split_at(split);
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let n: i64 = number.parse().map_err(|_| bad())?;
    let lifetime = match unit {
        "m" => Duration::try_minutes(n),
        "h" => Duration::try_hours(n),
        "d" => Duration::try_days(n),
        _ => None,
    }
    .filter(|d| *d > Duration::zero() && *d <= Duration::days(MAX_LIFETIME_DAYS))
    .ok_or_else(bad)?;
    Ok(Some(now + lifetime))
}

/// Issues a token for `grant` at `now`, expiring at `expires`, and returns
/// it (the only time it is shown). A new organiser token revokes every
/// organiser token before it (rotation): it is written first, so a crash
/// between leaves the old one working, never none.
pub fn issue_at(
    store: &dyn Store,
    grant: &Grant,
    now: DateTime<Utc>,
    expires: Option<DateTime<Utc>>,
) -> Result<Issued, RecordError> {
    check_grant(store, grant)?;
    if grant.is_organiser() && expires.is_some() {
        return Err(RecordError::Input("an organiser's token does not expire".into()));
    }
    let token = new_token()?;
    let kept =
        Kept { grant: grant.clone(), issued: Some(format_time(now)), expires: expires.map(format_time), revoked: None };
    let hash = hash_hex(&token);
    store.put_setting(&format!("{TOKEN_PREFIX}{hash}"), &to_bytes(&kept))?;
    let mut replaced = Vec::new();
    if grant.is_organiser() {
        for (key, mut old) in kept_tokens(store, "")? {
            if old.grant.is_organiser() && old.revoked.is_none() && !key.ends_with(&hash) {
                old.revoked = Some(format_time(now));
                store.put_setting(&key, &to_bytes(&old))?;
                replaced.push(id_of_key(&key).to_string());
            }
        }
    }
    let listed = listed(&format!("{TOKEN_PREFIX}{hash}"), kept, now);
    Ok(Issued { token, listed, replaced })
}

/// The organiser's first token, issued by `arbiter serve` on a store that
/// has none (`server::first_organiser_token`): with no clock here, its issue
/// time is not kept. Only for the organiser: every other token is issued by
/// `issue_at`, with its expiry.
pub fn issue(store: &dyn Store, grant: &Grant) -> Result<String, RecordError> {
    if !grant.is_organiser() {
        return Err(RecordError::Input("a seat's or a judge's token is issued with its expiry (issue_at)".into()));
    }
    let token = new_token()?;
    let kept = Kept { grant: grant.clone(), issued: None, expires: None, revoked: None };
    store.put_setting(&format!("{TOKEN_PREFIX}{}", hash_hex(&token)), &to_bytes(&kept))?;
    Ok(token)
}

/// What `token` is worth at `now`.
pub fn check(store: &dyn Store, token: &str, now: DateTime<Utc>) -> Result<Standing, RecordError> {
    let Some(bytes) = store.setting(&format!("{TOKEN_PREFIX}{}", hash_hex(token)))? else {
        return Ok(Standing::Unknown);
    };
    let kept = from_bytes(&bytes)?;
    if let Some(at) = kept.revoked {
        return Ok(Standing::Revoked(at));
    }
    let expires = kept.expires.as_deref().map(time).transpose()?;
    match expires {
        Some(t) if now >= t => Ok(Standing::Expired(format_time(t))),
        _ => Ok(Standing::Valid(kept.grant, expires)),
    }
}

/// The grant `token` carries, if it is one this store issued and it works at `now`.
pub fn grant_for(store: &dyn Store, token: &str, now: DateTime<Utc>) -> Result<Option<Grant>, RecordError> {
    match check(store, token, now)? {
        Standing::Valid(grant, _) => Ok(Some(grant)),
        _ => Ok(None),
    }
}

/// Every token (of `game` only, if named), oldest first, with its state at `now`.
pub fn list(store: &dyn Store, game: Option<&str>, now: DateTime<Utc>) -> Result<Vec<Listed>, RecordError> {
    if let Some(g) = game {
        check_game_name(g).map_err(RecordError::Input)?;
    }
    let mut all: Vec<Listed> = kept_tokens(store, "")?
        .into_iter()
        .filter(|(_, k)| game.is_none() || k.grant.game() == game)
        .map(|(key, k)| listed(&key, k, now))
        .collect();
    // Times are RFC 3339 UTC with milliseconds, so text order is time order.
    all.sort_by(|a, b| (&a.issued, &a.id).cmp(&(&b.issued, &b.id)));
    Ok(all)
}

/// Revokes the token with public id `id` at `now`: it stops working at
/// once. Revoking a revoked token changes nothing (the first time stays).
pub fn revoke(store: &dyn Store, id: &str, now: DateTime<Utc>) -> Result<Listed, RecordError> {
    if id.len() != ID_LEN || !id.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        return Err(RecordError::Input(format!(
            "a token id is {ID_LEN} lowercase hex digits (from `arbiter token list`), not {id:?}"
        )));
    }
    let mut found = kept_tokens(store, id)?;
    let Some((key, mut kept)) = found.pop() else {
        return Err(RecordError::Input(format!("no token has id {id}")));
    };
    if !found.is_empty() {
        return Err(RecordError::Input(format!("more than one token has id {id}")));
    }
    if kept.revoked.is_none() {
        kept.revoked = Some(format_time(now));
        store.put_setting(&key, &to_bytes(&kept))?;
    }
    Ok(listed(&key, kept, now))
}

/// Is there an organiser token that has not been revoked? (An organiser's
/// token does not expire.) `arbiter serve` issues one at start when not.
pub fn has_organiser(store: &dyn Store) -> Result<bool, RecordError> {
    Ok(kept_tokens(store, "")?.iter().any(|(_, k)| k.grant.is_organiser() && k.revoked.is_none()))
}

/// The kept tokens whose hash starts with `hash_prefix`: (setting key, token).
fn kept_tokens(store: &dyn Store, hash_prefix: &str) -> Result<Vec<(String, Kept)>, RecordError> {
    store
        .settings(&format!("{TOKEN_PREFIX}{hash_prefix}"))?
        .into_iter()
        .map(|(key, value)| Ok((key, from_bytes(&value)?)))
        .collect()
}

fn id_of_key(key: &str) -> &str {
    let hash = key.strip_prefix(TOKEN_PREFIX).unwrap_or(key);
    hash.get(..ID_LEN).unwrap_or(hash)
}

fn listed(key: &str, kept: Kept, now: DateTime<Utc>) -> Listed {
    let expired = kept.expires.as_deref().and_then(|t| parse_time(t).ok()).is_some_and(|t| now >= t);
    let state = match (&kept.revoked, expired) {
        (Some(_), _) => State::Revoked,
        (None, true) => State::Expired,
        (None, false) => State::Active,
    };
    Listed {
        id: id_of_key(key).to_string(),
        grant: kept.grant,
        issued: kept.issued,
        expires: kept.expires,
        revoked: kept.revoked,
        state,
    }
}

fn to_bytes(kept: &Kept) -> Vec<u8> {
    serde_json::to_vec(kept).expect("a kept token serialises")
}

fn from_bytes(bytes: &[u8]) -> Result<Kept, RecordError> {
    serde_json::from_slice(bytes).map_err(|e| RecordError::Io(format!("a stored token is unreadable: {e}")))
}

fn time(text: &str) -> Result<DateTime<Utc>, RecordError> {
    parse_time(text).map_err(|e| RecordError::Io(format!("a stored token's time is unreadable: {e}")))
}

// Read access. The setting `read/<game>` holds `{"read": "public"}` or
// `{"read": "token"}` once the game exists, or `{"creating": "<nonce>"}`
// while a create of that name is under way, which reads as token-only (a
// store written before this kept a bare `"public"` or `"token"`, read the
// same). No setting: public.
//
// Two creates of one name race: both may pass the check that the name is
// free, and only the store decides whose event 0 is stored. So a create
// (`creating`) first claims the name: by compare-and-swap from the value it
// saw while the game did not exist, it puts its own marker there. Then it
// stores event 0, and only if that succeeded writes its read access;
// if not, it swaps its marker back for what it saw, which fails, changing
// nothing, once anyone else has written since. Every value written is new
// (a marker has a nonce; a game's settled value is written only once the
// game exists, when no claim can succeed), so no swap succeeds late: the
// loser of the race never overwrites the winner's access, and a create that
// fails (a bad header, a broken import) leaves the setting as it found it.
// A crash between event 0 and the settled value leaves the game
// token-only: never more open than asked.

#[derive(Serialize)]
struct Settled {
    read: ReadAccess,
}

/// Who may read `game` (public unless set otherwise).
pub fn read_access(store: &dyn Store, game: &str) -> Result<ReadAccess, RecordError> {
    let Some(bytes) = store.setting(&format!("{READ_PREFIX}{game}"))? else {
        return Ok(ReadAccess::Public);
    };
    let bad = |why: String| RecordError::Io(format!("bad read access of {game}: {why}"));
    let value: Value = serde_json::from_slice(&bytes).map_err(|e| bad(e.to_string()))?;
    let read = match &value {
        Value::Object(o) if o.contains_key("creating") => return Ok(ReadAccess::Token),
        Value::Object(o) => o.get("read").cloned().unwrap_or_default(),
        _ => value,
    };
    serde_json::from_value(read).map_err(|e| bad(e.to_string()))
}

/// Sets who may read `game`.
pub fn set_read_access(store: &dyn Store, game: &str, access: ReadAccess) -> Result<(), RecordError> {
    let value = serde_json::to_vec(&Settled { read: access }).expect("serialises");
    Ok(store.put_setting(&format!("{READ_PREFIX}{game}"), &value)?)
}

/// Creates the game `name` with `create` (which stores its event 0),
/// readable as `read` from the moment it exists (see above): the server's
/// create, import and fork.
pub fn creating<T>(
    store: &dyn Store,
    name: &str,
    read: ReadAccess,
    create: impl FnOnce() -> Result<T, RecordError>,
) -> Result<T, RecordError> {
    check_game_name(name).map_err(RecordError::Input)?;
    let key = format!("{READ_PREFIX}{name}");
    // No setting reads as public, so a public create of a name that has
    // none writes none and needs no claim: a token-only create racing it
    // either stores event 0 first (and settles its own access) or fails
    // and swaps its marker back to none. This spares every public create
    // two durable writes.
    if read == ReadAccess::Public && store.setting(&key)?.is_none() {
        return create();
    }
    let mine = serde_json::to_vec(&serde_json::json!({ "creating": new_token()? })).expect("serialises");
    let seen = claim(store, name, &key, &mine)?;
    match create() {
        Ok(done) => {
            set_read_access(store, name, read)?;
            Ok(done)
        }
        Err(e) => {
            // What it saw comes back, unless someone wrote since (then
            // nothing changes). A failure here leaves the marker: token-only.
            let _ = store.swap_setting(&key, Some(&mine), seen.as_deref());
            Err(e)
        }
    }
}

/// Puts `mine` in the setting `key` by compare-and-swap from what it held
/// while the game `name` did not exist; returns that.
fn claim(store: &dyn Store, name: &str, key: &str, mine: &[u8]) -> Result<Option<Vec<u8>>, RecordError> {
    // Each failed swap means another create wrote in between; with many
    // creates of one name racing, a few rounds always let one through.
    for _ in 0..64 {
        let seen = store.setting(key)?;
        // Looked at after the setting: a settled value seen here belongs to
        // a game that exists by now.
        if store.head(name)?.is_some() {
            return Err(RecordError::Exists(name.to_string()));
        }
        if store.swap_setting(key, seen.as_deref(), Some(mine))? {
            return Ok(seen);
        }
    }
    Err(RecordError::Io(format!("the read access of {name} kept changing while it was created")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Header;
    use crate::store::SledStore;

    fn t(text: &str) -> DateTime<Utc> {
        parse_time(text).unwrap()
    }

    fn store_with_game(dir: &std::path::Path) -> SledStore {
        let store = SledStore::open(dir).unwrap();
        let header: Header = serde_json::from_value(serde_json::json!({"type": "open", "ruleset": "doomtrooper",
            "ruleset_version": 1, "seats": [{"id": "p1", "name": "Ann"}, {"id": "p2", "name": "Ben"}], "judges": ["Dana"]}))
        .unwrap();
        crate::ops::create(&store, "g", &header, "organiser").unwrap();
        store
    }

    fn seat() -> Grant {
        Grant::Seat { game: "g".into(), seat: "p1".into() }
    }

    #[test]
    fn expiry_is_a_day_by_default_or_as_written_and_bad_words_are_refused() {
        let now = t("2026-11-23T10:00:00Z");
        assert_eq!(expiry(&seat(), None, now).unwrap(), Some(t("2026-11-24T10:00:00Z")));
        assert_eq!(expiry(&Grant::Organiser, None, now).unwrap(), None, "an organiser's token is rotated, not expired");
        assert_eq!(expiry(&seat(), Some("30m"), now).unwrap(), Some(t("2026-11-23T10:30:00Z")));
        assert_eq!(expiry(&seat(), Some("12h"), now).unwrap(), Some(t("2026-11-23T22:00:00Z")));
        assert_eq!(expiry(&seat(), Some("7d"), now).unwrap(), Some(t("2026-11-30T10:00:00Z")));
        assert_eq!(expiry(&seat(), Some("never"), now).unwrap(), None);
        assert_eq!(expiry(&seat(), Some("2026-12-01T00:00:00Z"), now).unwrap(), Some(t("2026-12-01T00:00:00Z")));
        // A time at most MAX_LIFETIME_DAYS ahead, like a duration.
        let last = now + Duration::days(MAX_LIFETIME_DAYS);
        assert_eq!(expiry(&seat(), Some(&format_time(last)), now).unwrap(), Some(last));
        for bad in [
            "",
            "0h",
            "-1h",
            "1w",
            "h",
            "12",
            "1.5h",
            "99999999999999d",
            "3651d",
            "soon",
            "2026-11-23T10:00:00+02:00",
            "1é",
            // Past, now, and past the cap: a dead token, or one longer than a duration may be.
            "1999-01-01T00:00:00Z",
            "2026-11-23T10:00:00Z",
            "2036-11-20T10:00:00.001Z",
            "9999-12-31T23:59:59Z",
        ] {
            assert!(matches!(expiry(&seat(), Some(bad), now), Err(RecordError::Input(_))), "{bad:?} is refused");
        }
        assert!(expiry(&Grant::Organiser, Some("1h"), now).is_err());
    }

    #[test]
    fn a_token_works_until_its_expiry_and_not_after_revocation_whatever_the_clock() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_with_game(dir.path());
        let now = t("2026-11-23T10:00:00Z");
        let issued = issue_at(&store, &seat(), now, expiry(&seat(), None, now).unwrap()).unwrap();
        assert_eq!(issued.listed.id, id_of(&issued.token));
        assert_eq!(issued.listed.id.len(), ID_LEN);
        let at = |when: &str| check(&store, &issued.token, t(when)).unwrap();
        assert_eq!(at("2026-11-24T09:59:59.999Z"), Standing::Valid(seat(), Some(t("2026-11-24T10:00:00Z"))));
        assert_eq!(at("2026-11-24T10:00:00Z"), Standing::Expired("2026-11-24T10:00:00.000Z".into()));
        assert_eq!(list(&store, Some("g"), t("2026-11-25T00:00:00Z")).unwrap()[0].state, State::Expired);

        let later = t("2026-11-23T11:00:00Z");
        let revoked = revoke(&store, &issued.listed.id, later).unwrap();
        assert_eq!((revoked.state, revoked.revoked.as_deref()), (State::Revoked, Some("2026-11-23T11:00:00.000Z")));
        assert_eq!(at("2026-11-23T11:00:01Z"), Standing::Revoked("2026-11-23T11:00:00.000Z".into()));
        // Again: the first time stays.
        let again = revoke(&store, &issued.listed.id, t("2026-11-23T12:00:00Z")).unwrap();
        assert_eq!(again.revoked.as_deref(), Some("2026-11-23T11:00:00.000Z"));
        assert_eq!(check(&store, "not a token", now).unwrap(), Standing::Unknown);
        // Bad ids change nothing.
        let before = store.settings("").unwrap();
        for bad in ["", "zz", "0123456789abcdeg", "0123456789ABCDEF", "0000000000000000", &issued.token] {
            assert!(matches!(revoke(&store, bad, now), Err(RecordError::Input(_))), "{bad:?}");
        }
        assert_eq!(store.settings("").unwrap(), before);
    }

    #[test]
    fn a_new_organiser_token_revokes_the_ones_before_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_with_game(dir.path());
        assert!(!has_organiser(&store).unwrap());
        let first = issue(&store, &Grant::Organiser).unwrap();
        assert!(has_organiser(&store).unwrap());
        assert!(issue(&store, &seat()).is_err(), "a seat's token always has its expiry");
        let p1 = issue_at(&store, &seat(), t("2026-11-23T10:00:00Z"), None).unwrap();
        let now = t("2026-11-23T12:00:00Z");
        let second = issue_at(&store, &Grant::Organiser, now, None).unwrap();
        assert_eq!(second.replaced, vec![id_of(&first)]);
        assert_eq!(check(&store, &first, now).unwrap(), Standing::Revoked("2026-11-23T12:00:00.000Z".into()));
        assert_eq!(check(&store, &second.token, now).unwrap(), Standing::Valid(Grant::Organiser, None));
        assert!(matches!(check(&store, &p1.token, now).unwrap(), Standing::Valid(..)), "other tokens stay");
        // Revoking the last organiser token: `serve` issues a new one at its next start.
        revoke(&store, &second.listed.id, now).unwrap();
        assert!(!has_organiser(&store).unwrap());
    }

    #[test]
    fn tokens_and_read_access_stored_before_times_were_kept_still_read() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_with_game(dir.path());
        let old = "a".repeat(64);
        store
            .put_setting(&format!("{TOKEN_PREFIX}{}", hash_hex(&old)), br#"{"role":"seat","game":"g","seat":"p2"}"#)
            .unwrap();
        let grant = Grant::Seat { game: "g".into(), seat: "p2".into() };
        assert_eq!(check(&store, &old, t("2099-01-01T00:00:00Z")).unwrap(), Standing::Valid(grant, None));
        store.put_setting("read/g", br#""token""#).unwrap();
        assert_eq!(read_access(&store, "g").unwrap(), ReadAccess::Token);
        store.put_setting("read/g", br#""public""#).unwrap();
        assert_eq!(read_access(&store, "g").unwrap(), ReadAccess::Public);
    }

    #[test]
    fn a_create_that_fails_leaves_read_access_as_it_found_it_and_one_that_succeeds_sets_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_with_game(dir.path());
        let fail = || -> Result<(), RecordError> { Err(RecordError::Input("bad header".into())) };
        assert!(creating(&store, "h", ReadAccess::Token, fail).is_err());
        assert_eq!(store.setting("read/h").unwrap(), None);
        store.put_setting("read/h", br#""public""#).unwrap();
        assert!(creating(&store, "h", ReadAccess::Token, fail).is_err());
        assert_eq!(store.setting("read/h").unwrap().as_deref(), Some(&br#""public""#[..]));
        // An existing game is not claimed, and its access stays.
        set_read_access(&store, "g", ReadAccess::Public).unwrap();
        assert!(matches!(creating(&store, "g", ReadAccess::Token, || Ok(())), Err(RecordError::Exists(_))));
        assert_eq!(read_access(&store, "g").unwrap(), ReadAccess::Public);
        // While a create is under way the name reads as token-only.
        let seen = std::cell::Cell::new(None);
        creating(&store, "h", ReadAccess::Public, || {
            seen.set(Some(read_access(&store, "h")?));
            Ok(())
        })
        .unwrap();
        assert_eq!(seen.get(), Some(ReadAccess::Token));
        assert_eq!(read_access(&store, "h").unwrap(), ReadAccess::Public);
    }
}
