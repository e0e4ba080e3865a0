//! Every limit arbiter enforces, in one place, with the reason for each.
//!
//! A limit turns "it depends" into a clear refusal: an event, a string or a
//! stream that is larger than these is refused before anything is stored.

/// The format version written into every event's `v` field.
pub const FORMAT_VERSION: u64 = 1;

/// Largest canonical event, in bytes. A table action is a few hundred bytes;
/// 16 KiB leaves room for long rulings while keeping a sled leaf (at most
/// 17 chunks of 8 events) below the blob threshold set in `store::sled`
/// unless nearly every event in it is this large (see `SEGMENT_SIZE` there:
/// such a node is a blob, which arbiter syncs too).
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

/// Longest a durable sync (sled's flush, then fdatasync) may take before
/// the store is failed, in seconds. sled 0.34 can wait forever in its flush
/// after a write to a full disk failed (seen on a full tmpfs: every sled
/// thread idle, the flush waiting for a buffer no thread will write), and
/// an append must end with an answer, never hang. A healthy disk syncs in
/// milliseconds; a minute leaves room for a disk that is only slow.
pub const SYNC_DEADLINE_SECONDS: u64 = 60;

/// Most settings a sled store keeps in memory for reads (`store::sled`'s
/// `KeptSettings`): a token's setting is read on every request. A kept
/// setting (a token's hash, its grant and times) is a few hundred bytes,
/// so this is about 1 MB, and far more tokens than an event issues; past
/// it, all are forgotten and read from sled again as asked.
pub const MAX_KEPT_SETTINGS: usize = 4096;

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

// The service's connections.

/// How long a request's head (request line and headers) may take to
/// arrive, counted from when the connection is ready for it. A head is a
/// few hundred bytes; a tablet that dropped off the venue's Wi-Fi mid-head
/// would otherwise hold its connection (and a shutdown) forever.
pub const HEADER_TIMEOUT_SECONDS: u64 = 10;

/// How long a request's body may take to arrive after its head. The
/// largest body, an import of `MAX_IMPORT_BYTES`, takes about 5 s at
/// 100 Mbit/s; a body that trickles slower than that is refused (408) and
/// its connection closed, so a stalled client holds no append slot.
pub const BODY_TIMEOUT_SECONDS: u64 = 60;

/// How long a keep-alive connection may sit with no request in flight and
/// nothing received before it is closed (closed within twice this). A table
/// appends every few seconds and reconnecting on a LAN costs a handshake;
/// each idle connection costs a file descriptor and a task.
pub const IDLE_TIMEOUT_SECONDS: u64 = 5;

/// Most connections open at once. Above the live streams' cap
/// (`MAX_SUBSCRIBERS`, one connection each at most) with room for every
/// table of a large event to append; past it a new connection is answered
/// 503 "busy" and closed. Each costs a file descriptor: the server raises
/// its soft limit to fit, or lowers this cap to what the system allows.
pub const MAX_CONNECTIONS: usize = 4096;

/// After SIGTERM, how long requests in flight (appends finishing their
/// sync, a long export) have to end before the server exits anyway. Live
/// streams end at once; an append cut off here was either stored durably or
/// not at all, and in either case it was not acknowledged. Below the 30 s
/// most service managers wait before SIGKILL.
pub const SHUTDOWN_DEADLINE_SECONDS: u64 = 10;

/// How long an unacknowledged write to a client may wait (TCP_USER_TIMEOUT)
/// before the kernel drops the connection: a live subscriber whose tablet
/// vanished without a FIN would otherwise keep its place for the ~15
/// minutes of TCP's retransmissions.
pub const UNACKED_WRITE_SECONDS: u64 = 60;

/// Most live subscriptions to one game (`/stream`, or one game of
/// `/api/stream`). A feature table shown to a hall is a few hundred; past it
/// 503 "too_many_streams", never a slower append: events are fanned out
/// once, as bytes, to every subscriber.
pub const MAX_GAME_SUBSCRIBERS: usize = 1000;

/// Most live subscriptions in all: each holds a task and up to
/// `FANOUT_BUFFER` events of its game, so memory stays bounded whatever
/// the clients do.
pub const MAX_SUBSCRIBERS: usize = 2000;

/// Appends (or batches) a game's fan-out keeps for subscribers that are
/// behind. A subscriber further behind (its client reads slowly) catches up
/// from the store by seq, so it loses nothing; the buffer only saves it
/// those reads.
pub const FANOUT_BUFFER: usize = 64;

/// Connections past `MAX_CONNECTIONS` being told 503 at once (each for at
/// most a second); past this many they are closed without a word.
pub const MAX_REFUSING: usize = 64;

/// Live streams reading the store at once to catch up (from where a client
/// asked, or after falling behind the fan-out): each read holds one of
/// tokio's blocking threads, so 500 subscribers opening at once take turns
/// rather than 500 threads.
pub const MAX_CATCHING_UP: usize = 16;
