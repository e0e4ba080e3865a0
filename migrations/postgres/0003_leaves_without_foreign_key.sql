-- arbiter on PostgreSQL, schema version 3: a leaf of the log no longer
-- checks its event through a foreign key. Each leaf's check was a query
-- of its own in a trigger (about 10 us per event, a third of the
-- sequencer's insert) and a lock written onto the event's row (one more
-- WAL record and a dirtied page per event), to guard what the sequencer
-- makes true by construction: it gives positions, in one transaction, to
-- events it has just read. What the key guarded besides, that an event
-- with a leaf is not deleted, is guarded for every event instead, at no
-- cost to an insert: a statement that deletes events, or truncates them,
-- is refused. (Events are immutable; arbiter never deletes one.)
ALTER TABLE log_leaves DROP CONSTRAINT log_leaves_game_seq_fkey;

CREATE FUNCTION events_are_kept() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'events are never deleted (arbiter''s log names each)'
        USING ERRCODE = 'integrity_constraint_violation';
END
$$;

CREATE TRIGGER events_not_deleted BEFORE DELETE ON events
    FOR EACH STATEMENT EXECUTE FUNCTION events_are_kept();
CREATE TRIGGER events_not_truncated BEFORE TRUNCATE ON events
    FOR EACH STATEMENT EXECUTE FUNCTION events_are_kept();
