-- The lease fence holds an advisory lock instead of the lease row (docs/nodes.md#the-fence).
--
-- A fenced write took the lease row FOR SHARE: a row lock is written into the row itself, so every fenced
-- transaction dirtied the lease's page, wrote a WAL record and, with several writes of one workspace at once, made a
-- multixact: the second node's whole extra cost in PostgreSQL (docs/performance.md). An advisory lock lives in the
-- server's lock table alone. The guarantee is the same:
-- - a fenced write takes the workspace's fence lock SHARED until its transaction ends, then reads the lease (a new
--   snapshot: each statement of a volatile function reads what was committed when it began);
-- - a change of epoch (a takeover, a hand-over) takes it EXCLUSIVE first, so it waits for every write that passed
--   the fence, and a write that waited for it reads the new epoch and is refused.
-- Two keys: 461369855 (the fence's class; session_lock.py's liveness locks are 461369854) and the workspace's id.

CREATE OR REPLACE FUNCTION inbox_lease_fence(workspace bigint, held_epoch bigint) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(461369855, (workspace % 2147483648)::int);
    PERFORM 1 FROM workspace_leases
        WHERE workspace_id = workspace AND epoch = held_epoch AND expires_at > now();
    IF NOT FOUND THEN
        RAISE EXCEPTION 'workspace % is no longer leased at epoch %', workspace, held_epoch USING ERRCODE = 'IA410';
    END IF;
    RETURN true;
END
$$;

-- What a statement that changes a workspace's epoch calls once it knows it will: waits for the fenced writes under
-- way, and holds new ones back until its transaction ends. Always true (for a WHERE).
CREATE FUNCTION inbox_lease_takeover_lock(workspace bigint) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(461369855, (workspace % 2147483648)::int);
    RETURN true;
END
$$;
