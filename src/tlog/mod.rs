//! The verifiable log: every event of every game in a store is a leaf of
//! one append-only Merkle tree (RFC 6962, SHA-256), in the order events were
//! stored, and signed checkpoints (C2SP signed notes, Ed25519) say what the
//! tree was at a moment. With them a store cannot lose or rewrite an event
//! silently: an open checks the store against its newest checkpoint, and a
//! player who kept a checkpoint can have anyone check that their game is
//! still in the log unchanged (an inclusion proof in a later checkpoint,
//! and a consistency proof from theirs to it).
//!
//! - [`merkle`]: the tree (hashes, roots, proofs, checks); pure.
//! - [`note`]: signed notes, keys, checkpoints and witness cosignatures; pure.
//! - [`witness`]: a witness that cosigns a checkpoint only if it extends the
//!   last one it cosigned (c2sp.org/tlog-witness); pure.
//!
//! A leaf's data is the event's canonical bytes: exactly one line of
//! `arbiter export` without its newline, so `printf '\0'; cat line` piped to
//! `sha256sum` is the leaf hash. The per-game BLAKE3 chain is unchanged; the
//! tree binds the order of all games' events together under one signature.
//! The store keeps, beside each event, its position in the tree
//! (`Store::log_position`) and each complete subtree's hash (`Store::log_node`).
//!
//! Nothing here reads a store or a record: the offline bundle, which checks
//! an export, is `crate::proof::bundle`.

pub mod merkle;
pub mod note;
pub mod witness;

pub use merkle::{Hash, Nodes};
pub use note::{Checkpoint, NoteSigner, NoteVerifier};
