//! An offline proof that a game is in an organiser's log, for a player or
//! an auditor to keep and check with no store (`arbiter prove`, `arbiter
//! verify-bundle`).
//!
//! ```json
//! {"format":"arbiter-bundle/1","game":"t2","seq":116,
//!  "export":"<events 0..=116, one canonical JSON line each>",
//!  "leaf_index":405,"inclusion":["<base64 hash>",...],
//!  "checkpoint":"<signed note>","log_key":"<name+id+key>",
//!  "kept":{"from":300,"consistency":["<base64 hash>",...]}}
//! ```
//!
//! What checking it shows, and what each part rests on:
//! 1. the export is a valid record: every event's BLAKE3 hash, every link,
//!    every action legal under its ruleset (as `verify-file`);
//! 2. event `seq` (the last line) is leaf `leaf_index` of the tree that the
//!    checkpoint signs (RFC 6962 inclusion proof, SHA-256); its BLAKE3 chain
//!    fixes every event before it, so the whole export is in the log;
//! 3. the checkpoint is signed by `log_key` (Ed25519, C2SP signed note);
//!    a key in the bundle proves nothing by itself: compare it with the key
//!    the organiser published (`verify-bundle --expect-key`);
//! 4. with `kept`, a checkpoint the player kept earlier (`--kept`) is a
//!    prefix of this one (RFC 6962 consistency proof): the organiser has not
//!    rewritten anything the player saw logged;
//! 5. with a witness key (`--witness`), the checkpoint, or the kept one,
//!    carries that witness's cosignature: the witness saw no other history
//!    (a witness cosigns only checkpoints that extend the last it cosigned).

use serde::{Deserialize, Serialize};

use crate::record::{ExportBytes, RecordError, verify};
use crate::tlog::merkle::{leaf_hash, verify_consistency, verify_inclusion};
use crate::tlog::note::{Checkpoint, NoteVerifier, b64, open_checkpoint, unhashes};

pub const FORMAT: &str = "arbiter-bundle/1";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bundle {
    pub format: String,
    pub game: String,
    /// The event proved: the export's last line.
    pub seq: u64,
    /// Events 0..=seq as `arbiter export` writes them.
    pub export: String,
    pub leaf_index: u64,
    /// The inclusion proof, base64 hashes, nearest sibling first.
    pub inclusion: Vec<String>,
    pub checkpoint: String,
    pub log_key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept: Option<Kept>,
}

/// A consistency proof from a checkpoint the player kept to the bundle's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Kept {
    pub from: u64,
    pub consistency: Vec<String>,
}

/// What a bundle proved.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Proved {
    pub game: String,
    pub seq: u64,
    pub hash: String,
    pub origin: String,
    pub size: u64,
    pub root: String,
    pub leaf_index: u64,
    pub kept: Option<u64>,
    pub witnesses: Vec<String>,
}

/// Why a bundle did not check. `Input`: not a bundle, or an argument is
/// wrong; `Failed`: it is a bundle and it does not prove what it says.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BundleError {
    #[error("not a bundle: {0}")]
    Input(String),
    #[error("{0}")]
    Failed(String),
}

/// Checks a bundle. `log_key`: the key the organiser published (else the
/// bundle's own is used, and the report says so); `kept`: a checkpoint the
/// player kept; `witnesses`: keys whose cosignatures must be on it.
pub fn check(
    bundle: &Bundle,
    log_key: Option<&str>,
    kept: Option<&str>,
    witnesses: &[String],
) -> Result<Proved, BundleError> {
    let failed = |why: String| BundleError::Failed(why);
    if bundle.format != FORMAT {
        return Err(BundleError::Input(format!("format {:?} is not {FORMAT}", bundle.format)));
    }
    let key = NoteVerifier::parse(&bundle.log_key).map_err(|e| BundleError::Input(format!("log_key: {e}")))?;
    if let Some(published) = log_key {
        let published = NoteVerifier::parse(published).map_err(|e| BundleError::Input(format!("--expect-key: {e}")))?;
        if published != key {
            return Err(failed(format!(
                "the bundle's log key {} is not the published key {}",
                key.to_text(),
                published.to_text()
            )));
        }
    }
    let checkpoint =
        open_checkpoint(&key, &bundle.checkpoint).map_err(|e| failed(format!("the checkpoint does not check: {e}")))?;
    // 1. The export is a valid record, ending at the event proved.
    let (verified, _) = verify(&ExportBytes(bundle.export.clone().into_bytes()), None).map_err(|e| match e {
        RecordError::Io(m) => BundleError::Input(m),
        e => failed(format!("the export does not verify: {e}")),
    })?;
    if verified.events != bundle.seq + 1 {
        return Err(failed(format!(
            "the export holds events 0..{}, but the bundle proves event {}",
            verified.events - 1,
            bundle.seq
        )));
    }
    // 2. Its last line is the leaf.
    let line = bundle.export.trim_end_matches('\n').rsplit('\n').next().unwrap_or_default();
    let path = unhashes(&bundle.inclusion).ok_or_else(|| BundleError::Input("inclusion: not base64 hashes".into()))?;
    verify_inclusion(&leaf_hash(line.as_bytes()), bundle.leaf_index, checkpoint.size, &path, &checkpoint.root)
        .map_err(|e| {
            failed(format!("event {} of {} is not in checkpoint {}: {e}", bundle.seq, bundle.game, checkpoint.size))
        })?;
    // 4. The kept checkpoint is a prefix of this one.
    let kept_note = kept;
    let kept = match (kept, &bundle.kept) {
        (None, _) => None,
        // What the player asked the bundle to prove, it does not: a failed
        // check, as a proof that does not hold.
        (Some(_), None) => {
            return Err(failed(
                "--kept given, but the bundle has no consistency proof from it (make one with `prove --kept`)".into(),
            ));
        }
        (Some(note), Some(proof)) => Some(check_kept(&key, note, proof, &checkpoint)?),
    };
    // 5. Witnesses: a cosignature on the bundle's checkpoint, or on the
    // kept one (a witness's output is what a player keeps; the consistency
    // proof then carries its guarantee forward).
    let mut seen = Vec::new();
    for w in witnesses {
        let w = NoteVerifier::parse(w).map_err(|e| BundleError::Input(format!("--witness: {e}")))?;
        let on_kept = kept_note.is_some_and(|k| w.open(k).is_ok());
        if !on_kept {
            w.open(&bundle.checkpoint).map_err(|e| failed(format!("no checkpoint here is cosigned: {e}")))?;
        }
        seen.push(w.name.clone());
    }
    Ok(Proved {
        game: bundle.game.clone(),
        seq: bundle.seq,
        hash: verified.head,
        origin: checkpoint.origin,
        size: checkpoint.size,
        root: b64(&checkpoint.root),
        leaf_index: bundle.leaf_index,
        kept,
        witnesses: seen,
    })
}

fn check_kept(key: &NoteVerifier, note: &str, proof: &Kept, now: &Checkpoint) -> Result<u64, BundleError> {
    let failed = |why: String| BundleError::Failed(why);
    let kept = open_checkpoint(key, note).map_err(|e| failed(format!("the kept checkpoint does not check: {e}")))?;
    if kept.size != proof.from {
        return Err(BundleError::Input(format!(
            "the bundle proves consistency from checkpoint {}, but the kept checkpoint is {}",
            proof.from, kept.size
        )));
    }
    let path =
        unhashes(&proof.consistency).ok_or_else(|| BundleError::Input("kept.consistency: not base64 hashes".into()))?;
    verify_consistency(kept.size, now.size, &kept.root, &now.root, &path).map_err(|e| {
        failed(format!(
            "the log was rewritten: the kept checkpoint {} is not a prefix of checkpoint {} ({e})",
            kept.size, now.size
        ))
    })?;
    Ok(kept.size)
}
