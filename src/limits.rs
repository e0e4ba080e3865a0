//! Every limit arbiter enforces, in one place, with the reason for each.
//!
//! A limit turns "it depends" into a clear refusal: an event, a string or a
//! stream that is larger than these is refused before anything is stored.

/// The format version written into every event's `v` field.
pub const FORMAT_VERSION: u64 = 1;

/// Largest canonical event, in bytes. A table action is a few hundred bytes;
/// 16 KiB leaves room for long rulings while keeping a sled leaf (at most
/// 17 entries) far below the blob threshold set in `store::sled`, so every
/// event lives in the log file that arbiter syncs.
pub const MAX_EVENT_BYTES: usize = 16 * 1024;

/// Longest string anywhere in an event, in bytes.
pub const MAX_STRING_BYTES: usize = 1024;

/// Longest name: seat ids, player, judge, card and warrior names.
pub const MAX_NAME_BYTES: usize = 128;

/// Longest game name (a ref, like a git branch name).
pub const MAX_GAME_NAME_BYTES: usize = 64;

/// Most items in any array of an event.
pub const MAX_ARRAY_ITEMS: usize = 64;

/// Deepest nesting of objects and arrays in an event.
pub const MAX_DEPTH: usize = 16;

/// Most events in one stream (seq 0 ..= MAX_STREAM_EVENTS - 1). A long
/// combat is a few hundred events; a whole tournament day of one table is
/// well under a million. Sixteen million keeps a full fold of a stream within
/// seconds and its seq far within 2^53.
pub const MAX_STREAM_EVENTS: u64 = 1 << 24;

/// Most seats and judges in a game header.
pub const MAX_SEATS: usize = 8;
pub const MAX_JUDGES: usize = 16;

/// Largest and smallest integer in an event: JSON numbers are IEEE doubles
/// for most readers (jq among them), exact only within +-2^53.
pub const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// Longest line accepted from an export file or from stdin.
pub const MAX_LINE_BYTES: usize = 2 * MAX_EVENT_BYTES;

/// Largest HTTP request body, except imports: one event is at most
/// `MAX_LINE_BYTES`; a batch of appends is bounded by this size too.
pub const MAX_REQUEST_BYTES: usize = 4 * 1024 * 1024;

/// Most events in one batch append over HTTP (a judge transcribing a
/// paper record sends a few hundred; a whole record is an import).
pub const MAX_BATCH_EVENTS: usize = 1000;

/// Largest import over HTTP: a long day of one table is well under 100,000
/// events of a few hundred bytes; bigger records are imported locally.
pub const MAX_IMPORT_BYTES: usize = 64 * 1024 * 1024;

/// Most events in one page of `GET /api/games/{game}/events`.
pub const MAX_PAGE_EVENTS: u64 = 1000;

/// Most appends the server holds at once (running or waiting for their
/// game); beyond it a request is answered 503 "busy" at once, so a flood
/// of one table cannot starve the others of memory.
pub const MAX_PENDING_APPENDS: usize = 1024;

/// Most games the server keeps folded in memory for appends; past it the
/// least recently used is dropped (and folded again when next used).
pub const MAX_CACHED_GAMES: usize = 4096;

/// How far ahead of the store's clock a supplied `at` may be: a judge's
/// tablet may run a little fast, but a time in the future would hold every
/// later event's time there (times never go backwards).
pub const MAX_CLOCK_SKEW_SECONDS: i64 = 120;

/// Most games one live stream follows (`/api/stream?games=...`): a head
/// judge's floor, not the whole store; each costs a watcher on the server.
pub const MAX_FOLLOWED_GAMES: usize = 64;

/// Events between two snapshots of a game's fold (`Recorder` writes one when
/// a stored event's seq is a multiple of this). Folding costs tens of
/// microseconds an event, so from the nearest snapshot any state is at most
/// this many events away: tens of milliseconds, within the 100 ms a `state`
/// or `replay --from` should take. Writing one costs one serialisation of
/// the state per this many appends (well under 1% of an append's cost for
/// a state of a few KB) and the disk a state's size per this many events.
pub const SNAPSHOT_EVERY: u64 = 1000;

/// Of the snapshots, those after a multiple of `SNAPSHOT_EVERY` times this
/// are kept, and the two latest: the others are removed when the next but
/// one is written. A state far back is then at most this many times
/// `SNAPSHOT_EVERY` events from a snapshot, and the disk holds a snapshot
/// per 16,000 events (a state that keeps a history, such as GURPS's log
/// or Raw Deal's cards played, would otherwise cost its size every 1,000
/// events).
pub const SNAPSHOT_SPARSE: u64 = 16;
