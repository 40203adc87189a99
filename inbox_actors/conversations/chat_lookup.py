"""Which chat a platform status belongs to: a read of the messages the conversation actors stored.

The platform's delivery statuses name a message by its platform id and the recipient by a WhatsApp id that can
differ from the number a send used, so a status is routed to the chat its message was sent from. A status for a
send whose answer was lost (a crash between the platform's answer and the commit) has a platform id nobody
stored; its callback data names the message's row instead (send_callback.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from inbox_actors.conversations.send_callback import message_id_of
from inbox_actors.platform.messages import StatusUpdate
from persistence.database import Database
from persistence.queries import messages as message_queries


async def chats_of_statuses(db: Database, workspace_id: int, statuses: Sequence[StatusUpdate]) -> list[str | None]:
    """The phone of the workspace's chat each status's message was sent from; None for a message not ours."""
    if not statuses:
        return []
    row_ids = [message_id_of(status.callback_data) for status in statuses]
    by_platform_id, by_row_id = await message_queries.conversation_phones(
        db, workspace_id, [status.message_id for status in statuses], [i for i in row_ids if i is not None])
    return [by_platform_id.get(status.message_id) or (by_row_id.get(row_id) if row_id is not None else None)
            for status, row_id in zip(statuses, row_ids)]
