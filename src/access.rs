//! Who may do what on the server: bearer tokens, the roles they carry, and
//! whether a game can be read without one.
//!
//! - The **organiser** creates, imports and forks games, issues tokens and
//!   sets read access. An organiser does not act in games.
//! - A **seat** token lets that seat append as itself in one game.
//! - A **judge** token lets that judge append as themself (actions a judge
//!   may take, rulings and notes) in one game. The rules, not the token,
//!   decide that only judges may rule.
//! - Reading a game is open to anyone when its access is `public`, else to
//!   the organiser and the game's token holders.
//!
//! A token is 32 random bytes, shown once, as hex. The store keeps only its
//! BLAKE3 hash (a stolen store does not yield tokens), under
//! `token/<hash>`, with the grant as JSON. These are settings, not events:
//! tokens are not part of a game's record.

use serde::{Deserialize, Serialize};

use crate::record::{RecordError, Recorder};
use crate::store::Store;

const TOKEN_PREFIX: &str = "token/";
const READ_PREFIX: &str = "read/";

/// What a token lets its holder do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Grant {
    Organiser,
    Seat { game: String, seat: String },
    Judge { game: String, judge: String },
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
        matches!(self, Grant::Organiser) || self.actor_in(game).is_some()
    }

    pub fn is_organiser(&self) -> bool {
        matches!(self, Grant::Organiser)
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

fn hash_key(token: &str) -> String {
    format!("{TOKEN_PREFIX}{}", blake3::hash(token.as_bytes()).to_hex())
}

/// A new random token: 32 bytes from the operating system, as hex.
fn new_token() -> Result<String, RecordError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| RecordError::Io(format!("no randomness for a token: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Issues a token for `grant` and returns it (the only time it is shown).
/// A seat must be a seat of the game, a judge one of its judges now
/// (including judges added by a ruling).
pub fn issue(store: &dyn Store, grant: &Grant) -> Result<String, RecordError> {
    match grant {
        Grant::Organiser => {}
        Grant::Seat { game, seat } => {
            let recorder = Recorder::load(store, game)?;
            if !recorder.table().header.seats.iter().any(|s| &s.id == seat) {
                return Err(RecordError::Input(format!("{seat:?} is not a seat of {game}")));
            }
        }
        Grant::Judge { game, judge } => {
            let recorder = Recorder::load(store, game)?;
            if recorder.table().check_judge(judge).is_err() {
                return Err(RecordError::Input(format!("{judge:?} is not a judge of {game}")));
            }
        }
    }
    let token = new_token()?;
    let value = serde_json::to_vec(grant).expect("a grant serialises");
    store.put_setting(&hash_key(&token), &value)?;
    Ok(token)
}

/// The grant a token carries, if it is one this store issued.
pub fn grant_for(store: &dyn Store, token: &str) -> Result<Option<Grant>, RecordError> {
    match store.setting(&hash_key(token))? {
        None => Ok(None),
        Some(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| RecordError::Io(format!("a stored grant is unreadable: {e}"))),
    }
}

/// Is there an organiser token yet?
pub fn has_organiser(store: &dyn Store) -> Result<bool, RecordError> {
    for (_, value) in store.settings(TOKEN_PREFIX)? {
        if serde_json::from_slice::<Grant>(&value).is_ok_and(|g| g.is_organiser()) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Who may read `game` (public unless set otherwise).
pub fn read_access(store: &dyn Store, game: &str) -> Result<ReadAccess, RecordError> {
    match store.setting(&format!("{READ_PREFIX}{game}"))? {
        None => Ok(ReadAccess::Public),
        Some(bytes) => serde_json::from_slice(&bytes).map_err(|e| RecordError::Io(format!("bad read access: {e}"))),
    }
}

pub fn set_read_access(store: &dyn Store, game: &str, access: ReadAccess) -> Result<(), RecordError> {
    let value = serde_json::to_vec(&access).expect("serialises");
    Ok(store.put_setting(&format!("{READ_PREFIX}{game}"), &value)?)
}
