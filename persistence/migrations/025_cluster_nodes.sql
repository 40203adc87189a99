-- The nodes serving on this PostgreSQL, each seen at its last lease renewal (inbox_actors/cluster/): what a node
-- counts when it works out its fair share of the workspaces, a node that holds none yet included. A node leaving
-- deletes its row; a dead node's row ages out.
CREATE TABLE cluster_nodes (
    node_id text PRIMARY KEY,
    seen_at timestamptz NOT NULL
);
