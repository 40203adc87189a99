"""The contact export: every contact of the workspace, streamed as CSV or JSON lines, page by page (by id), so a
workspace of any size costs one page of memory. A contact added during the export is included if its id comes
after the page being read; an edit made during it may or may not be (each page is read as it stands). In CSV, a
text cell that would start a spreadsheet formula is prefixed with an apostrophe (CSV injection)."""

from __future__ import annotations

import csv
import io
from collections.abc import AsyncIterator

import msgspec

from inbox_actors.domain.events import iso
from persistence.database import Database, Record
from persistence.queries import contacts as contact_queries

FORMATS = {"csv": "text/csv; charset=utf-8", "jsonl": "application/x-ndjson"}
PAGE = 1_000
COLUMNS = ("phone", "name", "email", "company", "status", "tags", "notes", "custom_attributes", "opted_out",
           "opted_out_at", "created_at", "updated_at")


class ExportedContact(msgspec.Struct, frozen=True):
    phone: str
    name: str
    email: str | None
    company: str | None
    status: str
    tags: list[str]
    notes: str | None
    custom_attributes: dict
    opted_out: bool
    opted_out_at: str | None
    created_at: str
    updated_at: str


async def export(db: Database, workspace_id: int, fmt: str) -> AsyncIterator[bytes]:
    """The export's bytes, a page at a time (CSV: a header row first; tags joined with ";", attributes as JSON)."""
    if fmt == "csv":
        yield _csv_rows([COLUMNS])
    after = 0
    while True:
        rows = await contact_queries.contacts_after(db, workspace_id, after, PAGE)
        if not rows:
            return
        contacts = [_exported(row) for row in rows]
        if fmt == "csv":
            yield _csv_rows([_csv_fields(contact) for contact in contacts])
        else:
            yield b"".join(msgspec.json.encode(contact) + b"\n" for contact in contacts)
        after = rows[-1]["id"]


def _exported(row: Record) -> ExportedContact:
    return ExportedContact(
        phone=row["phone"], name=row["name"], email=row["email"], company=row["company"], status=row["status"],
        tags=list(row["tags"] or []), notes=row["notes"], custom_attributes=contact_queries.contact_attributes(row),
        opted_out=row["opted_out"], opted_out_at=iso(row["opted_out_at"]), created_at=iso(row["created_at"]),
        updated_at=iso(row["updated_at"]))


def _csv_fields(contact: ExportedContact) -> list[str]:
    text = [contact.name, contact.email or "", contact.company or "", ";".join(contact.tags), contact.notes or ""]
    name, email, company, tags, notes = (_inert(value) for value in text)
    return [contact.phone, name, email, company, contact.status, tags, notes,
            msgspec.json.encode(contact.custom_attributes).decode(), "true" if contact.opted_out else "false",
            contact.opted_out_at or "", contact.created_at, contact.updated_at]


def _inert(value: str) -> str:
    """A customer-written cell a spreadsheet would run as a formula (=, +, -, @ first) is kept as text."""
    return "'" + value if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value


def _csv_rows(rows: list) -> bytes:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\r\n").writerows(rows)
    return buffer.getvalue().encode()
