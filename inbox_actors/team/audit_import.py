"""Importing an earlier system's team audit log: its claims, releases and transfers become the chats' assignment
history (`source: audit`) from before this service began recording (`detailed_since`, the workspace's creation),
as the spec's assignment-history describes.

The file is JSON lines, one entry each:
    {"at": "2026-03-01T10:00:00Z", "phone": "919876543210", "event": "claimed" | "released" | "transferred",
     "from_user_id": 3, "to_user_id": 4, "by_user_id": 3, "reason": "shift change"}
(`phone`, `at` and `event` required; members by this workspace's user ids.) An entry is skipped, with its line
number and why, when it is not such an object, names a chat or member this workspace does not have, or is at or
after `detailed_since` (from then on the exact record covers it). Importing the same file again adds nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Literal

import msgspec

from inbox_actors.domain.jsonl_import import Skipped, UnknownWorkspace, decode_line, first_skipped, numbered_lines
from inbox_actors.domain.phones import phone_or_none
from persistence.database import Database
from persistence.queries import conversations as conversation_queries
from persistence.queries import workspaces as workspace_queries


class AuditLine(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    at: datetime
    phone: str
    event: Literal["claimed", "released", "transferred"]
    from_user_id: int | None = None
    to_user_id: int | None = None
    by_user_id: int | None = None
    reason: str | None = None


class ImportReport(msgspec.Struct, frozen=True):
    workspace_id: int
    detailed_since: datetime
    lines: int
    imported: int
    already_imported: int
    skipped: int
    first_skipped: list[Skipped]             # at most jsonl_import.MAX_REASONS_SHOWN


async def import_audit_log(db: Database, workspace_id: int, lines: Iterable[bytes]) -> ImportReport:
    async with db.transaction() as tx:
        workspace = await workspace_queries.find_workspace_created(tx, workspace_id)
        if workspace is None:
            raise UnknownWorkspace(workspace_id)
        detailed_since = workspace["created_at"]
        parsed, skipped, count = _parse(lines, detailed_since)
        chats = await conversation_queries.chat_ids_by_phone(tx, workspace_id,
                                                             sorted({entry.phone for _, entry in parsed}))
        mentioned = sorted({m for _, e in parsed for m in (e.from_user_id, e.to_user_id, e.by_user_id) if m})
        members = await conversation_queries.workspace_member_ids(tx, workspace_id, mentioned)
        rows = []
        for number, entry in parsed:
            unknown = [m for m in (entry.from_user_id, entry.to_user_id, entry.by_user_id)
                       if m is not None and m not in members]
            if entry.phone not in chats:
                skipped.append(Skipped(number, f"no chat with {entry.phone} in this workspace"))
            elif unknown:
                skipped.append(Skipped(number, f"no member {unknown[0]} in this workspace"))
            else:
                rows.append((chats[entry.phone], entry.event, entry.at, entry.from_user_id, entry.to_user_id,
                             entry.by_user_id, entry.reason))
        imported = await conversation_queries.insert_audit_assignment_events(tx, rows)
    return ImportReport(workspace_id, detailed_since, count, imported, len(rows) - imported, len(skipped),
                        first_skipped(skipped))


def _parse(lines: Iterable[bytes], detailed_since: datetime) -> tuple[list[tuple[int, AuditLine]], list[Skipped],
                                                                      int]:
    parsed: list[tuple[int, AuditLine]] = []
    skipped: list[Skipped] = []
    numbered = numbered_lines(lines)
    for number, raw in numbered:
        entry = decode_line(raw, AuditLine, "an audit entry")
        if isinstance(entry, str):
            skipped.append(Skipped(number, entry))
            continue
        phone = phone_or_none(entry.phone)
        if phone is None:
            skipped.append(Skipped(number, "phone is not a phone number"))
        elif entry.at.tzinfo is None:
            skipped.append(Skipped(number, "at has no time zone"))
        elif entry.at >= detailed_since:
            skipped.append(Skipped(number, "at or after detailed_since: the exact record covers it"))
        else:
            parsed.append((number, msgspec.structs.replace(entry, phone=phone)))
    return parsed, skipped, len(numbered)
