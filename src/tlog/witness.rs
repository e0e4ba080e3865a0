//! A witness (c2sp.org/tlog-witness): it keeps the last checkpoint it
//! cosigned for each log and cosigns a newer one only with a valid
//! consistency proof from it, so a log cannot show two histories to people
//! who trust the same witness. Pure: the caller reads and writes the state
//! and supplies the time.
//!
//! The request is the tlog-witness `add-checkpoint` body:
//!
//! ```text
//! old 412
//! <base64 hash>        one line per hash of the consistency proof from 412
//! <base64 hash>
//!                      a blank line
//! <the signed checkpoint note>
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::merkle::{Hash, verify_consistency};
use super::note::{Checkpoint, Cosigner, NoteVerifier, b64, hashes, open_checkpoint, unb64, unhashes};

/// What the witness last cosigned for each log (by origin).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct State {
    pub logs: BTreeMap<String, Seen>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Seen {
    pub size: u64,
    /// base64 root hash.
    pub root: String,
}

/// Why a witness refused (the tlog-witness status in brackets).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WitnessError {
    #[error("not an add-checkpoint request: {0} [400]")]
    Malformed(String),
    #[error("the checkpoint is not signed by the log's key: {0} [403]")]
    Signature(String),
    #[error("the witness last cosigned size {size} of this log, not {old}: ask again from {size} [409]")]
    Conflict { old: u64, size: u64 },
    #[error("the checkpoint is not consistent with the one the witness cosigned: {0} [422]")]
    Inconsistent(String),
}

/// A parsed add-checkpoint request.
pub struct Request {
    pub old: u64,
    pub proof: Vec<Hash>,
    pub note: String,
}

impl Request {
    pub fn parse(text: &str) -> Result<Request, WitnessError> {
        let bad = |m: &str| WitnessError::Malformed(m.to_string());
        let (head, note) = text.split_once("\n\n").ok_or_else(|| bad("no blank line before the checkpoint"))?;
        let mut lines = head.split('\n');
        let old = lines
            .next()
            .and_then(|l| l.strip_prefix("old "))
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| bad("the first line is not \"old SIZE\""))?;
        let proof: Vec<String> = lines.map(str::to_string).collect();
        let proof = unhashes(&proof).ok_or_else(|| bad("a proof line is not a base64 hash"))?;
        Ok(Request { old, proof, note: note.to_string() })
    }

    /// The request for `note`, proving consistency from `old` with `proof`.
    pub fn write(old: u64, proof: &[Hash], note: &str) -> String {
        let mut text = format!("old {old}\n");
        for h in hashes(proof) {
            text.push_str(&h);
            text.push('\n');
        }
        format!("{text}\n{note}")
    }
}

/// Checks a request against what the witness saw of `log`, and cosigns:
/// returns the new state and the cosignature line. `time`: seconds since
/// the Unix epoch.
pub fn add_checkpoint(
    state: &State,
    log: &NoteVerifier,
    witness: &Cosigner,
    request: &Request,
    time: u64,
) -> Result<(State, String), WitnessError> {
    let checkpoint: Checkpoint =
        open_checkpoint(log, &request.note).map_err(|e| WitnessError::Signature(e.to_string()))?;
    let seen = state.logs.get(&checkpoint.origin);
    let (size, root): (u64, Option<Hash>) = match seen {
        None => (0, None),
        Some(s) => (
            s.size,
            Some(unb64(&s.root).and_then(|r| r.try_into().ok()).ok_or_else(|| {
                WitnessError::Malformed(format!("the witness's own state for {} is damaged", checkpoint.origin))
            })?),
        ),
    };
    if request.old != size {
        return Err(WitnessError::Conflict { old: request.old, size });
    }
    if checkpoint.size < size {
        return Err(WitnessError::Inconsistent(format!("size {} is smaller than {size}", checkpoint.size)));
    }
    if let Some(root) = root {
        verify_consistency(size, checkpoint.size, &root, &checkpoint.root, &request.proof)
            .map_err(|e| WitnessError::Inconsistent(e.to_string()))?;
    } else if !request.proof.is_empty() {
        return Err(WitnessError::Malformed("a first checkpoint comes with no proof".into()));
    }
    let mut next = state.clone();
    next.logs.insert(checkpoint.origin.clone(), Seen { size: checkpoint.size, root: b64(&checkpoint.root) });
    Ok((next, witness.cosign(&checkpoint.body(), time)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tlog::merkle::{MemoryTree, consistency_proof, leaf_hash, root};
    use crate::tlog::note::NoteSigner;

    #[test]
    fn a_witness_cosigns_an_extension_and_refuses_a_second_history() {
        let log = NoteSigner::from_seed("example.com/log", [1; 32]).unwrap();
        let witness = Cosigner::from_seed("witness.example", [2; 32]).unwrap();
        let mut tree = MemoryTree::default();
        (0..5).for_each(|i| tree.push(leaf_hash(&[i])));
        let note_at = |t: &MemoryTree, n: u64| {
            log.sign(&Checkpoint { origin: log.name.clone(), size: n, root: root(t, n).unwrap() }.body())
        };
        let first = Request::parse(&Request::write(0, &[], &note_at(&tree, 5))).unwrap();
        let (state, cosig) = add_checkpoint(&State::default(), &log.verifier(), &witness, &first, 100).unwrap();
        let cosigned = format!("{}{cosig}", note_at(&tree, 5));
        assert!(witness.verifier().open(&cosigned).is_ok());
        (5..9).for_each(|i| tree.push(leaf_hash(&[i])));
        let proof = consistency_proof(&tree, 5, 9).unwrap().unwrap();
        let next = Request::parse(&Request::write(5, &proof, &note_at(&tree, 9))).unwrap();
        let (state, _) = add_checkpoint(&state, &log.verifier(), &witness, &next, 101).unwrap();
        assert_eq!(state.logs["example.com/log"].size, 9);
        // Another history of 12 events that rewrites event 2.
        let mut fork = MemoryTree::default();
        (0..12).for_each(|i| fork.push(leaf_hash(&[if i == 2 { 99 } else { i }])));
        let proof = consistency_proof(&fork, 9, 12).unwrap().unwrap();
        let forged = Request::parse(&Request::write(9, &proof, &note_at(&fork, 12))).unwrap();
        let refused = add_checkpoint(&state, &log.verifier(), &witness, &forged, 102).unwrap_err();
        assert!(matches!(refused, WitnessError::Inconsistent(_)), "{refused}");
        let stale = Request::parse(&Request::write(5, &[], &note_at(&tree, 9))).unwrap();
        assert_eq!(
            add_checkpoint(&state, &log.verifier(), &witness, &stale, 103).unwrap_err(),
            WitnessError::Conflict { old: 5, size: 9 }
        );
    }
}
