"""Which node wrote what, and when, in a check's own database: triggers record every row written to a table with a
`workspace_id` column, with the writing connection's `application_name` (a node names its connections after itself:
Settings.connection_name) and PostgreSQL's clock, and every change of a workspace's lease. A row is recorded only if
its write commits, since the record is part of the same transaction.

For scripts/cluster_check.py's pause mode: a node stopped past its lease must write nothing for the workspace once
another node has taken it over. Not for a service's database: the triggers cost every write a row of its own.
"""

from __future__ import annotations

from typing import NamedTuple

from persistence.database import Database

# A node's own records, not a workspace's state: the API-key activity its requests saw (and the keys' last-used
# time, which only moves forward), flushed by each node for the calls it answered, whoever holds the workspace.
NODE_OWN_TABLES = ("key_activity", "api_keys")

_INSTALL = """
CREATE TABLE check_writes (
    id bigserial PRIMARY KEY,
    writer text NOT NULL,
    at timestamptz NOT NULL,
    table_name text NOT NULL,
    workspace_id bigint,
    lease_node text,
    lease_epoch bigint
);
CREATE FUNCTION check_record_write() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    written jsonb := to_jsonb(CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END);
BEGIN
    INSERT INTO check_writes (writer, at, table_name, workspace_id, lease_node, lease_epoch)
    VALUES (current_setting('application_name'), clock_timestamp(), TG_TABLE_NAME,
            (written->>'workspace_id')::bigint,
            CASE WHEN TG_TABLE_NAME = 'workspace_leases' THEN written->>'node_id' END,
            CASE WHEN TG_TABLE_NAME = 'workspace_leases' THEN (written->>'epoch')::bigint END);
    RETURN NULL;
END
$$;
"""


async def install(db: Database) -> list[str]:
    """Record the writes from now on: the tables watched."""
    await db.execute(_INSTALL)
    tables = [row["table_name"] for row in await db.fetch(
        "SELECT table_name FROM information_schema.columns WHERE table_schema = 'public'"
        " AND column_name = 'workspace_id' AND table_name <> 'check_writes' AND table_name <> ALL($1::text[])"
        " AND table_name IN (SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE')"
        " ORDER BY table_name", list(NODE_OWN_TABLES))]
    for table in tables:
        await db.execute(f'CREATE TRIGGER check_record_write AFTER INSERT OR UPDATE OR DELETE ON "{table}"'
                         " FOR EACH ROW EXECUTE FUNCTION check_record_write()")
    return tables


class Takeover(NamedTuple):
    node: str
    epoch: int
    at: object          # PostgreSQL's timestamptz, compared there


async def takeover(db: Database, workspace_id: int, from_node: str) -> Takeover | None:
    """The first time the workspace's lease went to another node than `from_node` after that node last took or
    renewed it (None: not yet)."""
    row = await db.fetchrow(
        "SELECT lease_node, lease_epoch, at FROM check_writes WHERE table_name = 'workspace_leases'"
        " AND workspace_id = $1 AND lease_node <> $2 AND id > coalesce((SELECT max(id) FROM check_writes"
        "  WHERE table_name = 'workspace_leases' AND workspace_id = $1 AND lease_node = $2), 0)"
        " ORDER BY id LIMIT 1", workspace_id, from_node)
    return Takeover(row["lease_node"], row["lease_epoch"], row["at"]) if row is not None else None


class Writes(NamedTuple):
    before: int          # rows of the workspace the writer wrote up to the takeover
    after: int           # ... and after it
    tables_after: list[str]


async def writes_around(db: Database, workspace_id: int, writer: str, at: object) -> Writes:
    """The rows of the workspace (its lease aside) the connections named `writer` wrote, before and after `at`."""
    row = await db.fetchrow(
        "SELECT count(*) FILTER (WHERE at <= $3) AS before, count(*) FILTER (WHERE at > $3) AS after,"
        " coalesce(array_agg(DISTINCT table_name) FILTER (WHERE at > $3), '{}') AS tables_after"
        " FROM check_writes WHERE workspace_id = $1 AND writer = $2 AND table_name <> 'workspace_leases'",
        workspace_id, writer, at)
    return Writes(row["before"], row["after"], list(row["tables_after"]))
