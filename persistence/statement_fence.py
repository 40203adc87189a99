"""The fence a workspace's writes pass on a node among several: the node writes for a workspace only under the
lease it holds (inbox_actors/cluster/leases.py), so a node that lost the lease while paused or cut off writes nothing
once another node has taken the workspace over.

A task runs its statements under a fence (`fencing_statements`, set by the cell of a workspace's actor, and
inherited by the tasks it starts). Two checks, for two windows:
- in memory, before a write is sent (`StatementFence.check`): a node whose hold has run out, or that was told
  the lease is lost, sends no write, and a transaction under way rolls back instead of committing;
- in PostgreSQL, first in the transaction of every write (`inbox_lease_fence`, migrations 024 and 037): the lease
  must still be this epoch's, unexpired, and the workspace's fence lock (an advisory lock) stays held, shared, until
  the transaction ends; a change of epoch takes it exclusive, so a takeover waits for a write that passed and a
  write that reaches PostgreSQL after a takeover is refused. That covers a node paused between the
  memory check and its statement reaching the server.

A transaction's BEGIN carries the fence (`begin`: BEGIN and the fence in one round trip). A lone write carries it
inside itself (`carried`): a data-modifying CTE, which PostgreSQL runs to completion whether or not the statement
reads it, calls the fence in the statement's own implicit transaction, so the write and its fence are one round
trip, as an unfenced write is, instead of three (BEGIN with the fence, the statement, COMMIT). Whichever part of
the statement runs first, the fence (volatile: it reads the lease with a snapshot of its own, after taking the
lock) refuses a write that reaches PostgreSQL after a takeover, and its lock holds a takeover back until the
statement commits. A statement of a form that cannot carry it (several statements, no INSERT, UPDATE, DELETE or
WITH first) runs as a transaction of its own, as before. Reads outside a transaction are not fenced: they write
nothing. The PostgreSQL side costs a send about half again its CPU (docs/performance.md), so a node alone, which no
other node can take a workspace from, checks in memory only (`in_database`, set when the node is one of a cluster).

A node stopped while it holds a fenced transaction open would hold the fence lock with it; the server ends
such a session after `IDLE_IN_TRANSACTION` (persistence/connections.py), which rolls it back and lets the takeover
through.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache

# The SQLSTATE inbox_lease_fence() raises (migration 024).
LEASE_LOST_SQLSTATE = "IA410"


class LeaseLost(RuntimeError):
    """A statement refused because its node no longer holds the workspace's lease under the epoch it wrote under:
    nothing of it, or of its transaction, was written."""


class StatementFence:
    """The lease a task's statements are written under: `workspace_id` at `epoch`. `current_epoch(workspace_id)`
    is the node's view of its own hold (None once it may no longer count on it)."""

    __slots__ = ("workspace_id", "epoch", "begin", "in_database", "_current_epoch")

    def __init__(self, workspace_id: int, epoch: int, current_epoch: Callable[[int], int | None], *,
                 in_database: bool = True) -> None:
        self.workspace_id, self.epoch = workspace_id, epoch
        self._current_epoch = current_epoch
        # Whether another node may take the workspace over (a node of a cluster): what leaves the database is
        # fenced then too (inbox_actors/cluster/effect_fence.py).
        self.in_database = in_database
        # The BEGIN of a fenced write: the transaction and its fence in one simple-protocol round trip (both values
        # are integers). None: checked in memory only.
        self.begin = f"BEGIN; SELECT inbox_lease_fence({int(workspace_id)}, {int(epoch)})" if in_database else None

    def holds(self) -> bool:
        """Whether the node still holds the workspace under this epoch, by its own deadline (which ends before
        another node may take the lease: inbox_actors/cluster/leases.py)."""
        return self._current_epoch(self.workspace_id) == self.epoch

    def check(self) -> None:
        """Raise LeaseLost unless the node still holds the workspace under this epoch."""
        if not self.holds():
            raise LeaseLost(f"this node no longer holds workspace {self.workspace_id} at epoch {self.epoch}")


_fence: ContextVar[StatementFence | None] = ContextVar("statement_fence", default=None)


@contextmanager
def fencing_statements(fence: StatementFence | None) -> Iterator[None]:
    """Within the block, and in the tasks it starts, statements run under `fence`; None: under none, whatever the
    task that started this one had (a node's own actor started from a workspace's)."""
    token = _fence.set(fence)
    try:
        yield
    finally:
        _fence.reset(token)


def current_fence() -> StatementFence | None:
    return _fence.get()


_WRITING = re.compile(r"\b(INSERT|UPDATE|DELETE|MERGE|TRUNCATE|NOTIFY|pg_notify|nextval|setval)\b", re.IGNORECASE)


# The fence as a CTE of a lone write: inserts nothing (the fence answers true, or raises), into a table of no
# columns that is never written (migration 039); its two parameters follow the statement's own.
_CARRIED_FENCE = ("inbox_fence AS (INSERT INTO inbox_fence_sink SELECT"
                  " WHERE NOT inbox_lease_fence(${workspace}::bigint, ${epoch}::bigint))")
_CARRIER = re.compile(r"\s*(?:(WITH(?:\s+RECURSIVE)?\s+)|(?=(?:INSERT|UPDATE|DELETE)\b))", re.IGNORECASE)


@lru_cache(maxsize=4096)
def carried(sql: str, arguments: int) -> str | None:
    """The lone write `sql` (of `arguments` parameters) with the fence carried inside it, the fence's workspace and
    epoch its parameters `arguments` + 1 and + 2; None when its form cannot carry it."""
    found = _CARRIER.match(sql)
    if found is None or ";" in sql:
        return None
    fence = _CARRIED_FENCE.format(workspace=arguments + 1, epoch=arguments + 2)
    if found.group(1):
        return f"{sql[:found.end()]}{fence}, {sql[found.end():]}"
    return f"WITH {fence} {sql[found.end():]}"


@lru_cache(maxsize=4096)
def writes(sql: str) -> bool:
    """Whether a statement may write: anything but a SELECT that names no writing command (a SELECT ... FOR UPDATE
    counts as one: it locks rows for a write to come). The service's statements are constants, so the answer is
    cached by text."""
    return not sql.lstrip().upper().startswith("SELECT") or _WRITING.search(sql) is not None
