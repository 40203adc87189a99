"""Members mentioned in internal notes (`note_mentions`): written with the note, in its transaction, by the chat's
conversation actor; read by the thread (each note's mentions), a member's Mentions page and its count, and marked
seen when the member opens the chat or says so. Where a mention stands in the note's text is `spans`: start and end
offsets in pairs."""

from __future__ import annotations

from datetime import datetime

from persistence.database import Database, Record, UnitOfWork
from persistence.queries import chat_visibility


async def mentionable_members(q: Database | UnitOfWork, workspace_id: int) -> list[Record]:
    """The workspace's active members, whom a note may mention: id, name, email."""
    return await q.fetch(
        "SELECT id, name, email FROM members WHERE workspace_id = $1 AND status = 'active' ORDER BY lower(name), id",
        workspace_id)


async def add(tx: UnitOfWork, *, workspace_id: int, conversation_id: int, message_id: int, writer: int,
              mentions: list[tuple[int, list[int]]], at: datetime) -> None:
    """The note's mentions (member id, flat spans); the writer's mention of themselves is seen already. A member
    the note names twice is one row (the note's own key keeps a retried note from writing any twice)."""
    if not mentions:
        return
    await tx.execute(
        "INSERT INTO note_mentions (message_id, member_id, workspace_id, conversation_id, spans, mentioned_at,"
        " seen_at)"
        " SELECT $1, m.member_id, $2, $3, string_to_array(m.spans, ',')::integer[], $4::timestamptz,"
        "        CASE WHEN m.member_id = $5 THEN $4::timestamptz END"
        " FROM unnest($6::bigint[], $7::text[]) AS m(member_id, spans)"
        " ON CONFLICT (message_id, member_id) DO NOTHING",
        message_id, workspace_id, conversation_id, at, writer,
        [member_id for member_id, _ in mentions], [",".join(map(str, spans)) for _, spans in mentions])


async def of_notes(q: Database | UnitOfWork, message_ids: list[int]) -> list[Record]:
    """Each note's mentions: message_id, member_id, the member's name now, spans."""
    if not message_ids:
        return []
    return await q.fetch(
        "SELECT n.message_id, n.member_id, m.name, n.spans FROM note_mentions n JOIN members m ON m.id = n.member_id"
        " WHERE n.message_id = ANY($1::bigint[]) ORDER BY n.message_id, n.spans[1]",
        message_ids)


async def unseen_count(q: Database | UnitOfWork, workspace_id: int, member_id: int,
                       restricted_to: int | None) -> int:
    """How many notes mention the member that they have not seen, in chats they may see."""
    return await q.fetchval(
        "SELECT count(*) FROM note_mentions n JOIN conversations c ON c.id = n.conversation_id"
        " WHERE n.member_id = $2 AND n.workspace_id = $1 AND n.seen_at IS NULL AND "
        + chat_visibility.visible("c", "$3"),
        workspace_id, member_id, restricted_to)


async def of_member(q: Database | UnitOfWork, workspace_id: int, member_id: int, restricted_to: int | None, *,
                    unseen_only: bool, limit: int, before: tuple[datetime, int] | None = None) -> list[Record]:
    """The notes that mention the member, newest first, in chats they may see: the note (id, text, its writer),
    the chat (phone, contact's name), when, and when the member saw it. `before`: older than this
    (mentioned_at, message id)."""
    return await q.fetch(
        "SELECT n.message_id, n.mentioned_at, n.seen_at, msg.text, msg.actor_id, w.name AS actor_name,"
        " c.phone, k.name AS contact_name"
        " FROM note_mentions n"
        " JOIN conversations c ON c.id = n.conversation_id JOIN contacts k ON k.id = c.contact_id"
        " JOIN messages msg ON msg.id = n.message_id LEFT JOIN members w ON w.id = msg.actor_id"
        " WHERE n.member_id = $2 AND n.workspace_id = $1 AND " + chat_visibility.visible("c", "$3")
        + " AND (NOT $4 OR n.seen_at IS NULL)"
        " AND ($5::timestamptz IS NULL OR (n.mentioned_at, n.message_id) < ($5::timestamptz, $6::bigint))"
        " ORDER BY n.mentioned_at DESC, n.message_id DESC LIMIT $7",
        workspace_id, member_id, restricted_to, unseen_only, before[0] if before else None,
        before[1] if before else None, limit)


async def mark_seen(q: Database | UnitOfWork, workspace_id: int, member_id: int, conversation_id: int | None,
                    at: datetime) -> int:
    """The member's mentions not seen yet, in one chat (or every chat: None), seen now; how many were."""
    status = await q.execute(
        "UPDATE note_mentions SET seen_at = $4 WHERE member_id = $2 AND workspace_id = $1 AND seen_at IS NULL"
        " AND ($3::bigint IS NULL OR conversation_id = $3)",
        workspace_id, member_id, conversation_id, at)
    return int(status.rsplit(" ", 1)[-1])
