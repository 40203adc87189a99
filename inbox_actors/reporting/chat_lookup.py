"""Finding the one chat a read is about, as the caller may see it."""

from __future__ import annotations

from inbox_actors.domain.phones import phone_or_none
from persistence.database import Database, Record
from persistence.queries import chat_visibility
from persistence.queries.reporting import conversations as queries


class ChatNotFound(LookupError):
    """No such chat in the workspace, or not one the caller may see (persistence/queries/chat_visibility.py): 404."""


async def find_chat(db: Database, workspace_id: int, raw_phone: str,
                    restricted_to: int | None) -> tuple[str, Record]:
    """(the normalised phone, the chat's id, assignee, last customer message and recording start)."""
    phone = phone_or_none(raw_phone)
    row = await queries.chat_ref(db, workspace_id, phone) if phone is not None else None
    if row is None or not await chat_visibility.may_see(db, row, restricted_to):
        raise ChatNotFound(raw_phone)
    return phone, row
