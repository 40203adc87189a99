"""Which chat a platform message belongs to: a read of the messages the conversation actors stored.

The platform's delivery statuses name a message by its platform id and the recipient by a WhatsApp id that can
differ from the number a send used, so a status is routed to the chat its message was sent from.
"""

from __future__ import annotations

from persistence.database import Database
from persistence.queries import messages as message_queries


async def chats_of_messages(db: Database, workspace_id: int, platform_message_ids: list[str]) -> dict[str, str]:
    """platform message id -> the phone of the workspace's chat it belongs to, for the ids that are ours."""
    return await message_queries.conversation_phones(db, workspace_id, platform_message_ids)
