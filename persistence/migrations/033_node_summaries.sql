-- What each node of a cluster tells the operators about itself (inbox_actors/cluster/node_summary.py), for any
-- node's GET /ops/cluster: the figures only its own memory holds (live actors per kind, requests relayed, its clock's
-- skew from PostgreSQL), replaced in place every second. The node's liveness lock, its leases and its last renewal
-- are read where they are kept (pg_locks, workspace_leases, cluster_nodes). `incarnation` is one process's: a node
-- started again under the same name starts a new one. A node that stops marks `stopped_at`; one that dies leaves its
-- last figures. Rows not published for a day are deleted by the nodes that publish.
-- Unlogged: a row rewritten every second needs no write-ahead log (half of PostgreSQL's cost of a round). A crash of
-- PostgreSQL empties it, and a replica promoted has it empty: every node writes its row again within a second, and
-- only a dead node's last figures are lost (its lock, its leases and its last renewal are kept as ever).
CREATE UNLOGGED TABLE node_summaries (
    node_id      text PRIMARY KEY,
    incarnation  text NOT NULL,
    pid          integer NOT NULL,
    started_at   timestamptz NOT NULL,
    published_at timestamptz NOT NULL,
    stopped_at   timestamptz,
    figures      jsonb NOT NULL
);
