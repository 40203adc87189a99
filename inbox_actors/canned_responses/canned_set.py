"""A workspace's canned responses: each a shortcut (unique in the workspace whatever its case), a title and the
text it inserts.

A per-workspace setting written in one transaction each, like the label set: adding, changing and removing one
are recorded in the team audit log. The fields' shapes (lengths, characters) are the use cases' argument structs'
(`use_cases/canned_responses.py`); what needs more than a field's shape (a shortcut taken, the set's size, a text
of spaces only, a response that is not there) is refused here with a `CannedRefusal`.
"""

from __future__ import annotations

from datetime import datetime

import msgspec

from inbox_actors.domain import team_audit
from persistence.database import Database, Record
from persistence.queries import canned_responses as queries
from persistence.queries import team_audit as audit_queries

MAX_SHORTCUT = 32
MAX_TITLE = 100
MAX_CANNED = 500
"""A set a reply box can search as it is typed in, and a composer can offer in one list."""
SHORTCUT_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_-]*$"


class CannedResponse(msgspec.Struct, frozen=True):
    id: int
    shortcut: str
    title: str
    text: str
    created_by: int | None
    """The member who added it (null: the operator's command line)."""
    updated_by: int | None
    """The member who changed it last."""
    created_at: datetime
    updated_at: datetime


class CannedList(msgspec.Struct, frozen=True):
    data: list[CannedResponse]


class CannedRefusal(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


NOT_FOUND = CannedRefusal(404, "not_found", "No such canned response in this workspace.")


def canned_view(row: Record) -> CannedResponse:
    return CannedResponse(row["id"], row["shortcut"], row["title"], row["text"], row["created_by"],
                          row["updated_by"], row["created_at"], row["updated_at"])


async def canned_responses(db: Database, workspace_id: int) -> CannedList:
    """The set by shortcut."""
    return CannedList([canned_view(row) for row in await queries.list_canned(db, workspace_id)])


async def add(db: Database, workspace_id: int, member_id: int | None, via: str, shortcut: str, title: str,
              text: str, now: datetime) -> CannedResponse:
    title, text = _title(title), _text(text)
    async with db.transaction() as tx:
        if await queries.count_canned(tx, workspace_id) >= MAX_CANNED:
            raise CannedRefusal(409, "too_many_canned_responses",
                                f"A workspace has at most {MAX_CANNED} canned responses.")
        row = await queries.insert_canned(tx, workspace_id, shortcut, title, text, member_id)
        if row is None:
            raise _taken(shortcut)
        await _audit(tx, workspace_id, member_id, via, team_audit.CANNED_RESPONSE_ADDED, row, now,
                     {"shortcut": row["shortcut"], "title": row["title"]})
    return canned_view(row)


async def change(db: Database, workspace_id: int, member_id: int | None, via: str, canned_id: int,
                 shortcut: str | None, title: str | None, text: str | None, now: datetime) -> CannedResponse:
    """A field given as None keeps its value."""
    title = None if title is None else _title(title)
    text = None if text is None else _text(text)
    async with db.transaction() as tx:
        row = await queries.find_canned(tx, workspace_id, canned_id, for_update=True)
        if row is None:
            raise NOT_FOUND
        shortcut, title, text = shortcut or row["shortcut"], title or row["title"], text or row["text"]
        if shortcut.lower() != row["shortcut"].lower() and await queries.shortcut_taken(tx, workspace_id, shortcut,
                                                                                      canned_id):
            raise _taken(shortcut)
        updated = await queries.update_canned(tx, canned_id, shortcut, title, text, member_id)
        changed = [name for name in ("shortcut", "title", "text") if updated[name] != row[name]]
        await _audit(tx, workspace_id, member_id, via, team_audit.CANNED_RESPONSE_CHANGED, updated, now,
                     {"shortcut": shortcut, "from": row["shortcut"], "changed": changed})
    return canned_view(updated)


async def remove(db: Database, workspace_id: int, member_id: int | None, via: str, canned_id: int,
                 now: datetime) -> CannedResponse:
    """The canned response as it was before it was removed."""
    async with db.transaction() as tx:
        row = await queries.find_canned(tx, workspace_id, canned_id, for_update=True)
        if row is None:
            raise NOT_FOUND
        await queries.delete_canned(tx, canned_id)
        await _audit(tx, workspace_id, member_id, via, team_audit.CANNED_RESPONSE_REMOVED, row, now,
                     {"shortcut": row["shortcut"], "title": row["title"]})
    return canned_view(row)


def _title(raw: str) -> str:
    """On one line with single spaces (its shape is the argument's rule)."""
    return " ".join(raw.split())


def _text(raw: str) -> str:
    if not raw.strip():
        raise CannedRefusal(400, "invalid_text", "A canned response's text needs more than spaces.")
    return raw


def _taken(shortcut: str) -> CannedRefusal:
    return CannedRefusal(409, "shortcut_taken", f"The workspace already has a canned response /{shortcut} "
                                                "(shortcuts are the same whatever their case).")


async def _audit(tx, workspace_id: int, member_id: int | None, via: str, action: str, row: Record, now: datetime,
                 details: dict) -> None:
    await audit_queries.record(tx, workspace_id=workspace_id, at=now, member_id=member_id, via=via, action=action,
                               subject=f"canned_response:{row['id']}", details=details)
