"""Contacts: one row per (workspace, phone). Edits go through the contact card actor; every UPDATE here is
fenced by the row's `version`, so a writer in another process holding a stale version changes nothing.

`custom_attributes` is jsonb, which asyncpg hands over as text: `contact_attributes(row)` decodes it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec

from persistence.database import Database, Record, UnitOfWork


async def insert_contact_if_absent(tx: UnitOfWork, workspace_id: int, phone: str, name: str) -> tuple[Record, bool]:
    """The contact row (all columns) and whether this call created it. `phone` must be normalised."""
    row = await tx.fetchrow(
        "INSERT INTO contacts (workspace_id, phone, name) VALUES ($1, $2, $3)"
        " ON CONFLICT (workspace_id, phone) DO NOTHING RETURNING *",
        workspace_id, phone, name,
    )
    if row is not None:
        return row, True
    row = await tx.fetchrow("SELECT * FROM contacts WHERE workspace_id = $1 AND phone = $2", workspace_id, phone)
    assert row is not None, "a conflicting contact row vanished inside the transaction"
    return row, False


def first_contact_row(workspace_id: int, phone: str, name: str, at: datetime) -> dict[str, Any]:
    """The contact a chat's first contact makes (`conversations.make_chat`), as its row will be, but for its id:
    the values given on the schema's defaults (migration 001; tests/integration check they agree). Known before
    the statement runs, so the `contact_created` event it queues is built in advance."""
    return {"workspace_id": workspace_id, "phone": phone, "name": name, "email": None, "company": None,
            "status": "New", "tags": [], "notes": None, "custom_attributes": {}, "opted_out": False,
            "opted_out_at": None, "read_receipts": True, "version": 1, "created_at": at, "updated_at": at}


async def find_contact(q: UnitOfWork | Database, workspace_id: int, phone: str) -> Record | None:
    return await q.fetchrow("SELECT * FROM contacts WHERE workspace_id = $1 AND phone = $2", workspace_id, phone)


async def insert_contact(
    tx: UnitOfWork, *, workspace_id: int, phone: str, name: str, email: str | None, company: str | None,
    status: str, tags: list[str], notes: str | None, custom_attributes: dict[str, Any], now: datetime,
) -> Record | None:
    """The new row, or None when the phone already has a contact in the workspace (nothing changed then)."""
    return await tx.fetchrow(
        "INSERT INTO contacts (workspace_id, phone, name, email, company, status, tags, notes, custom_attributes,"
        " created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10, $10)"
        " ON CONFLICT (workspace_id, phone) DO NOTHING RETURNING *",
        workspace_id, phone, name, email, company, status, tags, notes, _json(custom_attributes), now,
    )


async def update_contact(
    tx: UnitOfWork, *, contact_id: int, version: int, name: str, email: str | None, company: str | None,
    status: str, tags: list[str], notes: str | None, custom_attributes: dict[str, Any], opted_out: bool,
    opted_out_at: datetime | None, now: datetime,
) -> Record | None:
    """Write the editable fields if the row is still at `version`, bumping it; None when it is not (another
    writer got there first, or the row is gone) and nothing changed."""
    return await tx.fetchrow(
        "UPDATE contacts SET name = $3, email = $4, company = $5, status = $6, tags = $7, notes = $8,"
        " custom_attributes = $9::jsonb, opted_out = $10, opted_out_at = $11, updated_at = $12,"
        " version = version + 1"
        " WHERE id = $1 AND version = $2 RETURNING *",
        contact_id, version, name, email, company, status, tags, notes, _json(custom_attributes), opted_out,
        opted_out_at, now,
    )


def contact_attributes(row: Record) -> dict[str, Any]:
    value = row["custom_attributes"]
    if isinstance(value, (str, bytes)):
        return msgspec.json.decode(value)
    return dict(value or {})


def _json(value: dict[str, Any]) -> str:
    return msgspec.json.encode(value).decode()


async def contacts_after(db: Database, workspace_id: int, after_id: int, limit: int) -> list[Record]:
    """The workspace's contacts by id after `after_id` (an export's walk: stable under concurrent writes)."""
    return await db.fetch("SELECT * FROM contacts WHERE workspace_id = $1 AND id > $2 ORDER BY id LIMIT $3",
                          workspace_id, after_id, limit)
