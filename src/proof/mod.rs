//! Proofs from a store's log (see `crate::tlog`): the answers of `GET
//! /api/proof/inclusion`, `GET /api/proof/consistency` and `arbiter prove`,
//! shared by the CLI and the server like `ops`; and the offline bundle a
//! player keeps and anyone checks with no store ([`bundle`]).

pub mod bundle;

use serde_json::{Value, json};

use self::bundle::{Bundle, Kept};
use crate::record::{RecordError, canonical_bytes};
use crate::store::{LogNodes, ReadError, Store};
use crate::tlog::merkle::{self, ProofError};
use crate::tlog::note::{NoteVerifier, b64, hashes, open_checkpoint};

fn input(e: ProofError) -> RecordError {
    RecordError::Input(e.to_string())
}

/// The tree size asked for, checked against the log: at most its size.
fn size_at(store: &dyn Store, size: u64) -> Result<u64, RecordError> {
    let now = store.log_size()?;
    if size > now {
        return Err(RecordError::Input(format!("the log holds {now} events; there is no tree of size {size}")));
    }
    Ok(size)
}

/// The inclusion proof of event `seq` of `game` (default: its head) in the
/// tree of `size` leaves: `{game, seq, hash, leaf_index, size, root, leaf, inclusion}`.
pub fn inclusion(store: &dyn Store, game: &str, seq: Option<u64>, size: u64) -> Result<Value, RecordError> {
    let size = size_at(store, size)?;
    let head = store.head(game)?.ok_or_else(|| RecordError::NoSuchGame(game.to_string()))?;
    let seq = seq.unwrap_or(head.seq);
    let event = store
        .get(game, seq)?
        .ok_or_else(|| RecordError::Input(format!("seq {seq} is past the head of {game} (seq {})", head.seq)))?;
    let index = store
        .log_position(game, seq)?
        // PostgreSQL gives positions just after the commit (its sequencer):
        // an event stored a moment ago may not have one yet.
        .ok_or_else(|| {
            RecordError::Input(format!("{game} seq {seq} has no place in the log yet: ask again in a moment"))
        })?;
    let nodes = LogNodes(store);
    let path = merkle::inclusion_proof(&nodes, index, size)?.map_err(|e| match e {
        ProofError::NoSuchLeaf { .. } => RecordError::Input(format!(
            "{game} seq {seq} is leaf {index} of the log, stored after the tree of size {size}"
        )),
        e => input(e),
    })?;
    let root = merkle::root(&nodes, size)?;
    let leaf = merkle::leaf_hash(&canonical_bytes(&event));
    if store.log_node(0, index)? != leaf {
        return Err(ReadError::Log(format!("leaf {index} is not the hash of {game} seq {seq}")).into());
    }
    Ok(json!({"game": game, "seq": seq, "hash": event.hash, "leaf_index": index, "size": size,
        "root": b64(&root), "leaf": b64(&leaf), "inclusion": hashes(&path)}))
}

/// The consistency proof from the tree of `from` leaves to the tree of
/// `to`: `{from, to, from_root, to_root, consistency}`.
pub fn consistency(store: &dyn Store, from: u64, to: u64) -> Result<Value, RecordError> {
    let to = size_at(store, to)?;
    let nodes = LogNodes(store);
    let path = merkle::consistency_proof(&nodes, from, to)?.map_err(input)?;
    Ok(json!({"from": from, "to": to, "from_root": b64(&merkle::root(&nodes, from)?),
        "to_root": b64(&merkle::root(&nodes, to)?), "consistency": hashes(&path)}))
}

/// The offline bundle of event `seq` of `game` (default: its head) in the
/// signed checkpoint `note`, with a consistency proof from `kept` (a
/// checkpoint the player kept) when given.
pub fn bundle(
    store: &dyn Store,
    game: &str,
    seq: Option<u64>,
    note: &str,
    log_key: &NoteVerifier,
    kept: Option<&str>,
) -> Result<Bundle, RecordError> {
    let checkpoint = open_checkpoint(log_key, note).map_err(|e| RecordError::Io(format!("the checkpoint: {e}")))?;
    let proof = inclusion(store, game, seq, checkpoint.size)?;
    let seq = proof["seq"].as_u64().expect("seq");
    let mut export = String::new();
    for event in store.read(game, 0)?.take(seq as usize + 1) {
        export.push_str(std::str::from_utf8(&canonical_bytes(&event?)).expect("canonical JSON is UTF-8"));
        export.push('\n');
    }
    let kept = match kept {
        None => None,
        Some(text) => {
            let k = open_checkpoint(log_key, text)
                .map_err(|e| RecordError::Input(format!("the kept checkpoint is not this log's: {e}")))?;
            if merkle::root(&LogNodes(store), k.size.min(store.log_size()?))? != k.root {
                return Err(RecordError::Lost(format!(
                    "the kept checkpoint {} is not a prefix of this log: the log was rewritten since",
                    k.size
                )));
            }
            Some(self::kept(store, k.size, checkpoint.size)?)
        }
    };
    Ok(Bundle {
        format: bundle::FORMAT.into(),
        game: game.into(),
        seq,
        export,
        leaf_index: proof["leaf_index"].as_u64().expect("index"),
        inclusion: serde_json::from_value(proof["inclusion"].clone()).expect("hashes"),
        checkpoint: note.into(),
        log_key: log_key.to_text(),
        kept,
    })
}

/// The consistency proof from the tree of `from` leaves (a checkpoint a
/// player kept) to the tree of `to`, as a bundle carries it.
pub fn kept(store: &dyn Store, from: u64, to: u64) -> Result<Kept, RecordError> {
    let proof = consistency(store, from, to)?;
    Ok(Kept { from, consistency: serde_json::from_value(proof["consistency"].clone()).expect("hashes") })
}
