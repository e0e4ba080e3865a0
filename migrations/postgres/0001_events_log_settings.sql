-- arbiter on PostgreSQL, schema version 1: the events of every game, the
-- verifiable log over them and its signed checkpoints, settings (hashed
-- tokens, read access, the log's key) and snapshots. Applied once, in
-- one transaction, by the first arbiter that opens the database (see
-- src/store/postgres.rs, `migrate`).

-- Each game's events, keyed by (game, seq): the primary key is the no-fork
-- rule's last line of defence. `bytes` are the exact canonical JSON bytes
-- that were hashed, never rewritten: rows are only ever inserted. `xid` is
-- the appending transaction's id (pg_current_xact_id): the verifiable log
-- takes events in that order (see log_size).
CREATE TABLE events (
    game  text   NOT NULL,
    seq   bigint NOT NULL CHECK (seq >= 0),
    xid   bigint NOT NULL,
    bytes bytea  NOT NULL,
    PRIMARY KEY (game, seq)
);
CREATE INDEX events_by_xid ON events (xid);
-- A game exists when its event 0 does: the list of games without a scan.
CREATE INDEX games ON events (game) WHERE seq = 0;

-- The verifiable log's leaves: which event is at each position. Given by
-- the sequencer (src/store/postgres.rs, `sequence`) with no gap, to the
-- events whose transactions have all ended, in the order of their xid.
CREATE TABLE log_leaves (
    position bigint PRIMARY KEY CHECK (position >= 0),
    game     text   NOT NULL,
    seq      bigint NOT NULL,
    UNIQUE (game, seq),
    FOREIGN KEY (game, seq) REFERENCES events (game, seq)
);

-- The hash of every complete subtree of the log above the leaves (level
-- 1 up): leaves [index << level, (index + 1) << level). A leaf's own hash
-- (level 0) is computed from the event's bytes whenever it is read.
CREATE TABLE log_nodes (
    level smallint NOT NULL CHECK (level BETWEEN 1 AND 63),
    index bigint   NOT NULL CHECK (index >= 0),
    hash  bytea    NOT NULL CHECK (length(hash) = 32),
    PRIMARY KEY (level, index)
);

-- The log's size, and below which xid every event has its leaf: one row,
-- locked by the sequencer (FOR UPDATE) so that one runs at a time.
CREATE TABLE log_size (
    only_row        boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    size            bigint  NOT NULL CHECK (size >= 0),
    sequenced_below bigint  NOT NULL
);
INSERT INTO log_size (size, sequenced_below) VALUES (0, 0);

-- Settings beside the games: not events, not hashed, not exported.
CREATE TABLE settings (
    key   text  PRIMARY KEY,
    value bytea NOT NULL
);

-- Snapshots of folded games: a cache, re-checked by every reader.
CREATE TABLE snapshots (
    game  text   NOT NULL,
    seq   bigint NOT NULL CHECK (seq >= 0),
    bytes bytea  NOT NULL,
    PRIMARY KEY (game, seq)
);

-- Signed checkpoints of the log, oldest first: one JSON record each, as a
-- line of sled's DATA/checkpoints file (src/store/checkpoints.rs), with
-- the tree size it signs. Sizes only grow, whichever server signs.
CREATE TABLE checkpoints (
    n      bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY,
    size   bigint NOT NULL UNIQUE CHECK (size >= 0),
    record text   NOT NULL
);
