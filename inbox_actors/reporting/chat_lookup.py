"""Finding the one chat a read is about, as the caller may see it."""

from __future__ import annotations

from inbox_actors.domain.phones import phone_or_none
from persistence.database import Database, Record
from persistence.queries.reporting import conversations as queries


class ChatNotFound(LookupError):
    """No such chat in the workspace, or it is not assigned to a member limited to assigned chats (404)."""


async def find_chat(db: Database, workspace_id: int, raw_phone: str,
                    only_assigned_to: int | None) -> tuple[str, Record]:
    """(the normalised phone, the chat's id, assignee, last customer message and recording start)."""
    phone = phone_or_none(raw_phone)
    row = await queries.chat_ref(db, workspace_id, phone) if phone is not None else None
    if row is None or (only_assigned_to is not None and row["assigned_to"] != only_assigned_to):
        raise ChatNotFound(raw_phone)
    return phone, row
