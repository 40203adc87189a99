-- Who owns a workspace's actors when the service runs as several nodes on one PostgreSQL (inbox_actors/cluster/).
-- A node holds a workspace's lease until `expires_at` (PostgreSQL's clock) and renews it well before; another node
-- may take it only once it has expired, and each change of owner adds one to `epoch`. A node writes on a workspace's
-- behalf only under the epoch it took, fenced by inbox_lease_fence, so a node that lost the lease (paused past it,
-- cut off from the database) writes nothing once another has taken over.
CREATE TABLE workspace_leases (
    workspace_id bigint PRIMARY KEY REFERENCES workspaces (id),
    node_id      text NOT NULL,
    epoch        bigint NOT NULL,
    expires_at   timestamptz NOT NULL
);

-- Raises SQLSTATE IA410 unless `held_epoch` is the workspace's lease as it stands and the lease has not expired;
-- the lease row is locked FOR SHARE until the caller's transaction ends, so a takeover (which updates the row)
-- waits for a write that passed the fence, and a write that starts after the takeover is refused.
CREATE FUNCTION inbox_lease_fence(workspace bigint, held_epoch bigint) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    PERFORM 1 FROM workspace_leases
        WHERE workspace_id = workspace AND epoch = held_epoch AND expires_at > now() FOR SHARE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'workspace % is no longer leased at epoch %', workspace, held_epoch USING ERRCODE = 'IA410';
    END IF;
    RETURN true;
END
$$;
