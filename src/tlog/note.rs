//! Checkpoints as C2SP signed notes (c2sp.org/signed-note,
//! c2sp.org/tlog-checkpoint), signed with Ed25519, and witness
//! cosignatures (c2sp.org/tlog-cosignature).
//!
//! ```text
//! arbiter/luna-city-open            <- origin: the log's name
//! 412                               <- tree size
//! 3q2+7w...=                        <- base64 root hash
//!                                   <- blank line ends the signed text
//! — arbiter/luna-city-open AbCd...  <- key name, base64(key id || signature)
//! ```
//!
//! The signature is over every byte of the text before the blank line,
//! including its last newline. A key id is the first 4 bytes of
//! SHA-256(key name || "\n" || 0x01 || public key) (0x04 for a cosigner).
//! Keys are written as Go's golang.org/x/mod/sumdb/note writes them:
//! `name+hex(key id)+base64(0x01 || public key)` for a verifier, and
//! `PRIVATE+KEY+name+hex(key id)+base64(0x01 || seed)` for a signer, so
//! standard tools read them as they are.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
use sha2::{Digest, Sha256};

use super::merkle::Hash;

/// Signature algorithm byte of an Ed25519 signed-note key.
const ED25519: u8 = 0x01;
/// Signature algorithm byte of an Ed25519 tlog-cosignature/v1 key.
const COSIGNATURE_V1: u8 = 0x04;
/// The em dash that starts a signature line.
const DASH: &str = "\u{2014} ";
/// A checkpoint is a few lines; a note longer than this is not one.
pub const MAX_NOTE_BYTES: usize = 16 * 1024;

/// Why a key or a note was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoteError {
    #[error("not a signed note: {0}")]
    Malformed(String),
    #[error("not a key: {0}")]
    Key(String),
    #[error("no valid signature by {0} on this note")]
    Unsigned(String),
    #[error("not a checkpoint: {0}")]
    Checkpoint(String),
}

/// A tree head: what a checkpoint says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    pub origin: String,
    pub size: u64,
    pub root: Hash,
}

impl Checkpoint {
    /// The signed text: origin, size and base64 root, one per line.
    pub fn body(&self) -> String {
        format!("{}\n{}\n{}\n", self.origin, self.size, B64.encode(self.root))
    }

    /// Reads the body of a checkpoint (the text above the blank line).
    pub fn parse_body(text: &str) -> Result<Checkpoint, NoteError> {
        let bad = |why: &str| NoteError::Checkpoint(why.to_string());
        let mut lines = text.strip_suffix('\n').ok_or_else(|| bad("the text does not end in a newline"))?.split('\n');
        let origin = lines.next().filter(|o| !o.is_empty()).ok_or_else(|| bad("no origin line"))?;
        let size = lines.next().ok_or_else(|| bad("no tree size line"))?;
        if size.is_empty() || (size.len() > 1 && size.starts_with('0')) || !size.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad("the tree size is not a decimal number"));
        }
        let size = size.parse().map_err(|_| bad("the tree size is too large"))?;
        let root = lines.next().ok_or_else(|| bad("no root hash line"))?;
        let root: Hash = B64
            .decode(root)
            .ok()
            .and_then(|r| r.try_into().ok())
            .ok_or_else(|| bad("the root hash is not 32 bytes of base64"))?;
        // Extension lines may follow; arbiter writes none and accepts none,
        // so that a checkpoint means exactly (origin, size, root).
        if lines.next().is_some() {
            return Err(bad("extension lines are not used by arbiter"));
        }
        Ok(Checkpoint { origin: origin.to_string(), size, root })
    }
}

/// The checkpoint a note says, its signatures not checked (a store
/// reading its own checkpoint file; a witness's request before it checks).
pub fn checkpoint_of(note: &str) -> Result<Checkpoint, NoteError> {
    let body = note.split_once("\n\n").map(|(b, _)| format!("{b}\n"));
    Checkpoint::parse_body(&body.ok_or_else(|| NoteError::Malformed("no blank line before the signatures".into()))?)
}

fn key_id(name: &str, alg: u8, public: &[u8; 32]) -> [u8; 4] {
    let mut h = Sha256::new();
    h.update(name.as_bytes());
    h.update(b"\n");
    h.update([alg]);
    h.update(public);
    h.finalize()[..4].try_into().expect("4 bytes")
}

/// A key name: non-empty, no spaces, no '+' (the key string's separator).
fn check_name(name: &str) -> Result<(), NoteError> {
    if name.is_empty() || name.chars().any(|c| c.is_whitespace() || c == '+' || c.is_control()) {
        return Err(NoteError::Key(format!("{name:?} is not a key name (no spaces, no '+')")));
    }
    Ok(())
}

/// A log's signing key (the organiser's), with its name (the log's origin).
pub struct NoteSigner {
    pub name: String,
    key: SigningKey,
}

impl NoteSigner {
    /// A new key from 32 random bytes the caller supplies (this module
    /// reads no randomness itself).
    pub fn from_seed(name: &str, seed: [u8; 32]) -> Result<NoteSigner, NoteError> {
        check_name(name)?;
        Ok(NoteSigner { name: name.to_string(), key: SigningKey::from_bytes(&seed) })
    }

    /// Reads `PRIVATE+KEY+name+hex id+base64(0x01 || seed)`.
    pub fn parse(text: &str) -> Result<NoteSigner, NoteError> {
        let text = text.trim();
        let rest = text.strip_prefix("PRIVATE+KEY+").ok_or_else(|| NoteError::Key("no PRIVATE+KEY+ prefix".into()))?;
        let (name, id, key) = split_key(rest)?;
        let [alg, seed @ ..] = key.as_slice() else { return Err(NoteError::Key("empty key".into())) };
        let seed: [u8; 32] = seed.try_into().map_err(|_| NoteError::Key("an Ed25519 seed is 32 bytes".into()))?;
        if *alg != ED25519 {
            return Err(NoteError::Key(format!("algorithm {alg} is not Ed25519 (1)")));
        }
        let signer = NoteSigner::from_seed(name, seed)?;
        if signer.key_id() != id {
            return Err(NoteError::Key("the key id does not match the key".into()));
        }
        Ok(signer)
    }

    /// The private key as text (to keep in a file only the organiser reads).
    pub fn to_text(&self) -> String {
        let mut key = vec![ED25519];
        key.extend_from_slice(self.key.as_bytes());
        format!("PRIVATE+KEY+{}+{}+{}", self.name, hex(&self.key_id()), B64.encode(key))
    }

    pub fn key_id(&self) -> [u8; 4] {
        key_id(&self.name, ED25519, self.key.verifying_key().as_bytes())
    }

    /// The public key, as players and auditors are given it.
    pub fn verifier(&self) -> NoteVerifier {
        NoteVerifier { name: self.name.clone(), key: self.key.verifying_key(), alg: ED25519 }
    }

    /// A signed note: `body`, a blank line, and this key's signature line.
    pub fn sign(&self, body: &str) -> String {
        let sig = self.key.sign(body.as_bytes());
        let mut blob = self.key_id().to_vec();
        blob.extend_from_slice(&sig.to_bytes());
        format!("{body}\n{DASH}{} {}\n", self.name, B64.encode(blob))
    }
}

/// A public key that checks notes: a log's (Ed25519) or a witness's (cosignature/v1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteVerifier {
    pub name: String,
    key: VerifyingKey,
    alg: u8,
}

fn split_key(text: &str) -> Result<(&str, [u8; 4], Vec<u8>), NoteError> {
    // The key is base64, which may itself hold '+': split off two fields only.
    let mut parts = text.splitn(3, '+');
    let (Some(name), Some(id), Some(key)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(NoteError::Key("expected name+keyid+key".into()));
    };
    check_name(name)?;
    let id = unhex(id)
        .and_then(|v| v.try_into().ok())
        .ok_or_else(|| NoteError::Key("the key id is not 8 hex digits".into()))?;
    let key = B64.decode(key).map_err(|_| NoteError::Key("the key is not base64".into()))?;
    Ok((name, id, key))
}

impl NoteVerifier {
    /// Reads `name+hex id+base64(alg || public key)`.
    pub fn parse(text: &str) -> Result<NoteVerifier, NoteError> {
        let (name, id, key) = split_key(text.trim())?;
        let [alg, public @ ..] = key.as_slice() else { return Err(NoteError::Key("empty key".into())) };
        if *alg != ED25519 && *alg != COSIGNATURE_V1 {
            return Err(NoteError::Key(format!("algorithm {alg} is not Ed25519 (1) or a cosignature/v1 key (4)")));
        }
        let public: [u8; 32] = public.try_into().map_err(|_| NoteError::Key("an Ed25519 key is 32 bytes".into()))?;
        let key = VerifyingKey::from_bytes(&public).map_err(|_| NoteError::Key("not an Ed25519 point".into()))?;
        if key_id(name, *alg, &public) != id {
            return Err(NoteError::Key("the key id does not match the key".into()));
        }
        Ok(NoteVerifier { name: name.to_string(), key, alg: *alg })
    }

    pub fn key_id(&self) -> [u8; 4] {
        key_id(&self.name, self.alg, self.key.as_bytes())
    }

    pub fn to_text(&self) -> String {
        let mut key = vec![self.alg];
        key.extend_from_slice(self.key.as_bytes());
        format!("{}+{}+{}", self.name, hex(&self.key_id()), B64.encode(key))
    }

    /// Checks that `note` carries a valid signature by this key, and
    /// returns its signed text. Signature lines of other keys are allowed
    /// (witnesses' cosignatures) and not checked here.
    pub fn open<'n>(&self, note: &'n str) -> Result<&'n str, NoteError> {
        let (body, sigs) = split_note(note)?;
        for line in sigs.lines() {
            let Some((name, blob)) = line.strip_prefix(DASH).and_then(|l| l.split_once(' ')) else {
                return Err(NoteError::Malformed(format!("{line:?} is not a signature line")));
            };
            let blob = B64.decode(blob).map_err(|_| NoteError::Malformed("a signature is not base64".into()))?;
            if name != self.name || blob.len() < 4 || blob[..4] != self.key_id() {
                continue;
            }
            let ok = match self.alg {
                ED25519 => {
                    Signature::from_slice(&blob[4..]).is_ok_and(|s| self.key.verify(body.as_bytes(), &s).is_ok())
                }
                _ => {
                    blob.len() == 4 + 8 + 64 && {
                        let time = u64::from_be_bytes(blob[4..12].try_into().expect("8 bytes"));
                        let signed = cosigned_text(time, body);
                        Signature::from_slice(&blob[12..]).is_ok_and(|s| self.key.verify(signed.as_bytes(), &s).is_ok())
                    }
                }
            };
            if ok {
                return Ok(body);
            }
        }
        Err(NoteError::Unsigned(self.name.clone()))
    }
}

/// Splits a note into its signed text (with its last newline) and its
/// signature lines.
fn split_note(note: &str) -> Result<(&str, &str), NoteError> {
    if note.len() > MAX_NOTE_BYTES {
        return Err(NoteError::Malformed(format!("longer than {MAX_NOTE_BYTES} bytes")));
    }
    if !note.ends_with('\n') {
        return Err(NoteError::Malformed("it does not end in a newline".into()));
    }
    let at = note.find("\n\n").ok_or_else(|| NoteError::Malformed("no blank line before the signatures".into()))?;
    let (body, sigs) = (&note[..at + 1], &note[at + 2..]);
    if sigs.is_empty() {
        return Err(NoteError::Malformed("no signature lines".into()));
    }
    Ok((body, sigs))
}

/// The text a witness signs: tlog-cosignature/v1.
fn cosigned_text(time: u64, body: &str) -> String {
    format!("cosignature/v1\ntime {time}\n{body}")
}

/// A witness's key: it cosigns checkpoints (c2sp.org/tlog-cosignature).
pub struct Cosigner {
    pub name: String,
    key: SigningKey,
}

impl Cosigner {
    pub fn from_seed(name: &str, seed: [u8; 32]) -> Result<Cosigner, NoteError> {
        check_name(name)?;
        Ok(Cosigner { name: name.to_string(), key: SigningKey::from_bytes(&seed) })
    }

    pub fn parse(text: &str) -> Result<Cosigner, NoteError> {
        let signer = NoteSigner::parse(text)?;
        Ok(Cosigner { name: signer.name, key: signer.key })
    }

    /// The private key as text; the same form as a log's signer key.
    pub fn to_text(&self) -> String {
        NoteSigner { name: self.name.clone(), key: self.key.clone() }.to_text()
    }

    pub fn verifier(&self) -> NoteVerifier {
        NoteVerifier { name: self.name.clone(), key: self.key.verifying_key(), alg: COSIGNATURE_V1 }
    }

    /// The cosignature line for `body` at `time` (seconds since the Unix epoch).
    pub fn cosign(&self, body: &str, time: u64) -> String {
        let sig = self.key.sign(cosigned_text(time, body).as_bytes());
        let mut blob = self.verifier().key_id().to_vec();
        blob.extend_from_slice(&time.to_be_bytes());
        blob.extend_from_slice(&sig.to_bytes());
        format!("{DASH}{} {}\n", self.name, B64.encode(blob))
    }
}

/// Opens a checkpoint signed by `log`: its signature, then its body.
pub fn open_checkpoint(log: &NoteVerifier, note: &str) -> Result<Checkpoint, NoteError> {
    let body = log.open(note)?;
    let checkpoint = Checkpoint::parse_body(body)?;
    if checkpoint.origin != log.name {
        return Err(NoteError::Checkpoint(format!(
            "its origin {:?} is not the log {:?} that signed it",
            checkpoint.origin, log.name
        )));
    }
    Ok(checkpoint)
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok()).collect()
}

pub fn b64(bytes: &[u8]) -> String {
    B64.encode(bytes)
}

pub fn unb64(text: &str) -> Option<Vec<u8>> {
    B64.decode(text).ok()
}

/// Hashes as a proof carries them in JSON: base64, in order.
pub fn hashes(path: &[Hash]) -> Vec<String> {
    path.iter().map(|h| b64(h)).collect()
}

/// The hashes of a proof read back from JSON; None if one is not base64 of
/// 32 bytes.
pub fn unhashes(path: &[String]) -> Option<Vec<Hash>> {
    path.iter().map(|h| unb64(h).and_then(|v| v.try_into().ok())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signer() -> NoteSigner {
        NoteSigner::from_seed("example.com/log", [7; 32]).unwrap()
    }

    #[test]
    fn a_checkpoint_round_trips_and_any_changed_byte_fails() {
        let cp = Checkpoint { origin: "example.com/log".into(), size: 412, root: [9; 32] };
        let note = signer().sign(&cp.body());
        let v = NoteVerifier::parse(&signer().verifier().to_text()).unwrap();
        assert_eq!(open_checkpoint(&v, &note).unwrap(), cp);
        let forged = note.replace("\n412\n", "\n413\n");
        assert!(matches!(open_checkpoint(&v, &forged), Err(NoteError::Unsigned(_))));
        let other = NoteSigner::from_seed("example.com/log", [8; 32]).unwrap().verifier();
        assert!(open_checkpoint(&other, &note).is_err(), "another key with the same name");
    }

    #[test]
    fn keys_round_trip_as_text_and_a_wrong_id_is_refused() {
        // Many seeds, so that some keys' base64 holds '+' (the separator).
        for seed in 0..64u8 {
            let s = NoteSigner::from_seed("example.com/log", [seed; 32]).unwrap();
            assert_eq!(NoteSigner::parse(&s.to_text()).unwrap().verifier(), s.verifier());
            assert_eq!(NoteVerifier::parse(&s.verifier().to_text()).unwrap(), s.verifier());
        }
        let s = signer();
        let again = NoteSigner::parse(&s.to_text()).unwrap();
        assert_eq!(again.verifier(), s.verifier());
        let text = s.verifier().to_text();
        let (name, rest) = text.split_once('+').unwrap();
        let (_, key) = rest.split_once('+').unwrap();
        assert!(NoteVerifier::parse(&format!("{name}+00000000+{key}")).is_err());
    }

    #[test]
    fn a_cosignature_checks_with_the_witness_key_only() {
        let cp = Checkpoint { origin: "example.com/log".into(), size: 3, root: [1; 32] };
        let note = signer().sign(&cp.body());
        let w = Cosigner::from_seed("witness.example", [3; 32]).unwrap();
        let cosigned = format!("{note}{}", w.cosign(&cp.body(), 1_700_000_000));
        let wv = NoteVerifier::parse(&w.verifier().to_text()).unwrap();
        assert_eq!(wv.open(&cosigned).unwrap(), cp.body());
        assert!(wv.open(&note).is_err());
        assert!(signer().verifier().open(&cosigned).is_ok(), "the log's signature still checks");
    }
}
