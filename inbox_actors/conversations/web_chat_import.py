"""Importing chats from a web-client session, so a workspace's web-client history lives beside its WhatsApp chats
(channel `web_client`: the channel rules of sending.py then apply to them: text only).

The file is JSON lines, one chat each:
    {"phone": "919876543210", "name": "Asha",
     "messages": [{"at": "2026-05-01T10:00:00Z", "from": "customer", "text": "Hi"},
                  {"at": "2026-05-01T10:01:00Z", "from": "agent", "text": "Hello!", "user_id": 3}]}
(`from`: customer, agent or bot; `user_id`: the agent, one of this workspace's members, optional.) A chat comes in
as history: resolved at its last message, nobody waiting, nothing unread; its messages in the order of their times.
A line
is skipped, with its number and why, when it is not such an object, has no messages, names a member the
workspace does not have, or names a number that already has a chat here (importing the same file again adds
nothing).

The import writes from the operator's command line, not through the chat's actor: a running service that holds
that number's chat in memory as "none yet" meets the imported row on its next write (the insert fails, the actor
restarts and reads it; a platform webhook caught by that is answered 503 and retried). Import before the numbers'
customers write, or accept that one restart.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Annotated, Literal

import msgspec

from inbox_actors.domain.jsonl_import import Skipped, UnknownWorkspace, decode_line, first_skipped, numbered_lines
from inbox_actors.domain.phones import phone_or_none
from inbox_actors.domain.text import storable
from persistence.database import Database
from persistence.queries import conversations as conversation_queries
from persistence.queries import web_chats as queries
from persistence.queries import workspaces as workspace_queries

MAX_MESSAGES = 10_000


class WebMessage(msgspec.Struct, frozen=True, forbid_unknown_fields=True, rename={"sender": "from"}):
    at: datetime
    sender: Literal["customer", "agent", "bot"]
    text: Annotated[str, msgspec.Meta(min_length=1, max_length=4096)]
    user_id: int | None = None


class WebChat(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    phone: str
    messages: Annotated[list[WebMessage], msgspec.Meta(min_length=1, max_length=MAX_MESSAGES)]
    name: Annotated[str, msgspec.Meta(max_length=200)] = ""


class WebChatReport(msgspec.Struct, frozen=True):
    workspace_id: int
    lines: int
    imported_chats: int
    imported_messages: int
    skipped: int
    first_skipped: list[Skipped]


async def import_web_chats(db: Database, workspace_id: int, lines: Iterable[bytes]) -> WebChatReport:
    """Each chat in its own transaction: one bad line costs only itself."""
    if await workspace_queries.find_workspace_created(db, workspace_id) is None:
        raise UnknownWorkspace(workspace_id)
    skipped: list[Skipped] = []
    chats = messages = 0
    numbered = numbered_lines(lines)
    for number, raw in numbered:
        reason = await _import_one(db, workspace_id, raw)
        if isinstance(reason, str):
            skipped.append(Skipped(number, reason))
        else:
            chats, messages = chats + 1, messages + reason
    return WebChatReport(workspace_id, len(numbered), chats, messages, len(skipped), first_skipped(skipped))


async def _import_one(db: Database, workspace_id: int, raw: bytes) -> int | str:
    """How many messages the chat brought, or why it was skipped."""
    chat = decode_line(raw, WebChat, "a web chat")
    if isinstance(chat, str):
        return chat
    phone = phone_or_none(chat.phone)
    if phone is None:
        return "phone is not a phone number"
    if any(message.at.tzinfo is None for message in chat.messages):
        return "a message's at has no time zone"
    ordered = sorted(chat.messages, key=lambda message: message.at)
    agents = sorted({m.user_id for m in ordered if m.user_id is not None})
    async with db.transaction() as tx:
        known = await conversation_queries.workspace_member_ids(tx, workspace_id, agents)
        if len(known) != len(agents):
            return f"no member {sorted(set(agents) - known)[0]} in this workspace"
        if await queries.chat_exists(tx, workspace_id, phone):
            return f"{phone} already has a chat here"
        await queries.insert_chat(tx, workspace_id=workspace_id, phone=phone, name=storable(chat.name) or "",
                                  messages=[(m.at, m.sender, storable(m.text) or "", m.user_id) for m in ordered])
    return len(ordered)
