//! arbiter: an event-sourced adjudication log for tournament card and
//! tabletop games.
//!
//! # Map of the modules
//! - [`limits`]: every limit, with its reason.
//! - [`json`]: strict JSON in (no floats, no duplicate keys), RFC 8785 canonical JSON out.
//! - [`event`]: the event envelope, the header, sealing (hash and chain) and checking.
//! - [`kernel`]: the machinery every ruleset shares: windows of priority, counters that nest, violations, views.
//! - [`rules`]: the rulesets (one module each, mostly its step table), dispatched by one enum.
//! - [`adjudication`]: judges' rulings (rewind, decide, penalty, add_judge) and notes.
//! - [`floor`]: a game at a glance for the floor: where it stands, the calls and rulings that wait for a judge.
//! - [`delta`]: structured differences between states (outcome first).
//! - [`compare`]: fork, what-if and diff of records.
//! - [`replay`]: each event in plain words with its step before and after and its state delta.
//! - [`fold`]: events in order to the state at each seq, with rulings' hash checks and rewinds.
//! - [`store`]: the `Store` trait and its backends, sled (the embedded default) and PostgreSQL: durable, conditional appends.
//! - [`copy`]: a whole store into another (any backend to any other), in log order, checked on both sides.
//! - [`tlog`]: the verifiable log: one Merkle tree (RFC 6962) over every stored event, signed checkpoints (C2SP signed notes), the proofs and the witness; pure.
//! - [`record`]: the append path (check against the rules, then store) and whole-record checks (verify, import, export).
//! - [`schema`]: JSON Schema of the envelope and every payload, generated from the Rust types.
//! - [`proof`]: inclusion and consistency proofs and offline bundles from a store's log, and a bundle's check.
//! - [`ops`]: the answers the CLI and the server share (the JSON each verb shows).
//! - [`access`]: tokens and roles (organiser, seat, judge) and per-game read access.
//! - [`sign_in`]: the link that signs a seat or a judge in at the table page, its QR code, the printed sheet.
//! - [`server`]: `arbiter serve`, the HTTP API, live streams and the replay page (axum).
//!
//! I/O happens only in `store`, `server`, `record`'s export files and the binary (`src/main.rs`, `src/cli/`);
//! `tests/tidy.rs` checks it, and that the reducers (`rules`, `kernel`, `adjudication`) stay pure.

// A Violation is the refusal a judge reads: step, rule, message, who may act.
// It is returned on the cold path only, so it stays a plain value, not a box.
#![allow(clippy::result_large_err)]

pub mod access;
pub mod adjudication;
pub mod compare;
pub mod copy;
pub mod delta;
pub mod event;
mod floor;
pub mod fold;
pub mod json;
pub mod kernel;
pub mod limits;
pub mod ops;
pub mod proof;
pub mod record;
pub mod replay;
pub mod rules;
pub mod schema;
pub mod server;
pub mod sign_in;
pub mod store;
pub mod tlog;
