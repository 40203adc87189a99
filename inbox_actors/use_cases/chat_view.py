"""One chat as a person works it: the chat, its latest messages with their delivery ticks, the customer's 24-hour
window, the contact's card, and what the caller may do in it (the templates to send when the window is closed, the
members a chat can be transferred to, the labels to put on it). Opening it is a person looking: the view is
recorded and its unread messages count as read, as the inbox's `open` use case does. What the page offers is what
the declarations allow the caller (`chats.CLAIM.allows`, `contacts.EDIT_CARD.allows`)."""

from __future__ import annotations

from datetime import datetime

import msgspec

from inbox_actors.contacts.contact_card import ContactView
from inbox_actors.conversations.sending import CUSTOMER_WINDOW
from inbox_actors.domain.member_ref import MemberRef
from inbox_actors.domain.phones import phone_or_none
from inbox_actors.labels import label_set as labels
from inbox_actors.platform import templates
from inbox_actors.platform.templates import Template
from inbox_actors.reporting import contact_list, thread
from inbox_actors.reporting.chat_lookup import ChatNotFound
from inbox_actors.reporting.conversation_detail import ConversationDetail, find_detail_and_row
from inbox_actors.reporting.thread import Message
from inbox_actors.use_cases import chats, contacts, team
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.deps import UseCaseDeps
from inbox_actors.use_cases.outcomes import Done, Refused
from inbox_actors.use_cases.use_case import run

THREAD_SIZE = 100


class Abilities(msgspec.Struct, frozen=True):
    """What the page may offer: never an action the caller's permissions refuse."""

    act: bool
    """Claim, release, transfer, resolve, reply, mark read, notes, labels, snooze (the inbox permission)."""
    transfer_to_others: bool
    """Seeing the members a chat can go to (`team.MEMBER_NAMES`)."""
    edit_contact: bool
    """Changing the contact's card (the contacts permission)."""


class ChatView(msgspec.Struct, frozen=True):
    chat: ConversationDetail
    messages: list[Message]
    """The newest THREAD_SIZE messages, oldest first, outbound ones with their receipts."""
    earlier_messages: bool
    failure_reasons: dict[int, str]
    """Why each failed message shown failed (the platform's error), by message id."""
    window_open: bool
    window_closes_at: datetime | None
    templates: list[Template]
    """Approved templates, offered when the window is closed."""
    members: list[MemberRef]
    """Active members other than the caller, to transfer to."""
    labels: list[str]
    """The workspace's labels not on the chat yet, to put on it."""
    contact: ContactView | None
    """The whole card, for a caller who may read contacts."""
    abilities: Abilities


async def open_chat_view(deps: UseCaseDeps, caller: Caller, raw_phone: str) -> ChatView | Refused:
    """The chat for this caller; a caller who may act on it has opened it (a view, unread cleared)."""
    if not chats.SHOW.allows(caller):
        return chats.no_such_chat()
    act = chats.OPEN.allows(caller)
    if act:
        opened = await chats.open_chat(deps, caller, raw_phone)
        if isinstance(opened, Refused):
            return opened
    return await chat_view(deps, caller, raw_phone, act=act)


async def chat_view(deps: UseCaseDeps, caller: Caller, raw_phone: str, *,
                    act: bool | None = None) -> ChatView | Refused:
    """The chat as it is now, without recording a view (a live refresh of an open page)."""
    phone = phone_or_none(raw_phone)
    now = deps.clock.now()
    found = None if phone is None else await find_detail_and_row(deps.db, caller.workspace_id, phone, now,
                                                                 caller.only_assigned_to)
    if found is None or not chats.SHOW.allows(caller):
        return chats.no_such_chat()
    chat, ref = found
    try:
        page = await thread.messages(deps.db, caller.workspace_id, phone,
                                     {"order": "desc", "limit": str(THREAD_SIZE), "expand": "receipts"},
                                     caller.only_assigned_to)
    except ChatNotFound:
        return chats.no_such_chat()
    last_customer = ref["last_customer_message_at"]
    closes_at = last_customer + CUSTOMER_WINDOW if last_customer is not None else None
    window_open = closes_at is not None and now <= closes_at
    act = chats.CLAIM.allows(caller) if act is None else act
    transfer = act and team.MEMBER_NAMES.allows(caller)
    offered = [] if window_open or not act else await templates.workspace_templates(
        deps.db, caller.workspace_id, status_name="APPROVED")
    named = await run(deps, caller, team.MEMBER_NAMES, {}) if transfer else None
    members = [] if not isinstance(named, Done) else [
        MemberRef(member.user_id, member.name) for member in named.data
        if member.status == "active" and member.user_id != caller.member_id]
    offered_labels = [] if not act else [
        label.name for label in (await labels.labels(deps.db, caller.workspace_id)).data
        if label.name.lower() not in {name.lower() for name in chat.labels}]
    contact = None
    if contacts.SHOW.allows(caller):
        try:
            contact = await contact_list.one_contact(deps.db, caller.workspace_id, phone, caller.only_assigned_to)
        except contact_list.ContactNotFound:
            contact = None
    return ChatView(chat=chat, messages=list(reversed(page.data)), earlier_messages=page.next_cursor is not None,
                    failure_reasons=await thread.failure_reasons(deps.db, ref["id"], page.data),
                    window_open=window_open,
                    window_closes_at=closes_at, templates=offered, members=members,
                    labels=offered_labels, contact=contact,
                    abilities=Abilities(act=act, transfer_to_others=transfer,
                                        edit_contact=contact is not None and contacts.EDIT_CARD.allows(caller)))
