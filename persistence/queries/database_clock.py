"""PostgreSQL's clock, the one every node shares: what a time rule spanning requests compares against when it
cannot read `now()` in the statement that acts on it (a node's own clock may run ahead or behind)."""

from __future__ import annotations

from datetime import datetime

from persistence.database import Database, UnitOfWork


async def now(q: Database | UnitOfWork) -> datetime:
    """PostgreSQL's time now (in a transaction: the transaction's start, as every `now()` in it)."""
    return await q.fetchval("SELECT now()")
