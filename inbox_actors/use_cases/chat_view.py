"""One chat as a person works it: the chat, its latest messages with their delivery ticks, the customer's 24-hour
window, the contact's card, and what the caller may do in it (the templates to send when the window is closed, the
members a chat can be transferred to, the labels to put on it). Opening it is a person looking: the view is
recorded and its unread messages count as read, as the inbox's `open` use case does (for everyone, as the API
counts them; the inbox's own unread counts are each member's, `member_chat_reads`). What the page offers is what
the declarations allow the caller (`chats.CLAIM.allows`, `contacts.EDIT_CARD.allows`).

Beside the API's shapes, for a person reading it: a template as the text the customer got (its body with the
message's values), a customer's file with its size (the platform's, `platform/media.py`), the chat's trail (claims,
releases, transfers, resolutions, labels, snoozes: `reporting/chat_trail.py`) among its messages by time, the
transfer that handed it to the caller with its reason, and the members each note mentions, where its text names them
(`use_cases/mentions.py`). A contact who has no chat yet opens as `NewChat`: the card,
no messages, and the templates that start a chat (`chats.SEND_TEMPLATE`, which makes the chat)."""

from __future__ import annotations

from datetime import datetime

import msgspec
import trio

from inbox_actors.contacts.contact_card import ContactView
from inbox_actors.conversations.sending import CUSTOMER_WINDOW
from inbox_actors.domain.member_ref import MemberRef
from inbox_actors.domain.phones import phone_or_none
from inbox_actors.domain.team_ref import TeamRef
from inbox_actors.labels import label_set as labels
from inbox_actors.paging.parameters import MAX_PAGE
from inbox_actors.platform import templates
from inbox_actors.platform.templates import Template, filled
from inbox_actors.reporting import contact_list, thread
from inbox_actors.reporting.chat_lookup import ChatNotFound
from inbox_actors.reporting.chat_trail import TrailEntry, chat_trail, handed_over_to
from inbox_actors.reporting.conversation_detail import ConversationDetail, find_detail_and_row
from inbox_actors.reporting.thread import Message
from inbox_actors.team.teams import team_names
from inbox_actors.use_cases import chats, contacts, mentions, reports, team
from inbox_actors.use_cases.caller import Caller
from inbox_actors.use_cases.deps import UseCaseDeps
from inbox_actors.use_cases.mentions import NotePiece
from inbox_actors.use_cases.outcomes import Done, Refused
from inbox_actors.use_cases.outcomes import Reason as Why
from inbox_actors.use_cases.use_case import run
from persistence.queries import ai_usage
from persistence.queries.reporting import inbox_views as page_queries

THREAD_SIZE = 40
"""The newest messages a chat opens with: a few screens of them, so that the page a member opens first stays light
(docs/inbox-app.md, "The workspace at 10,000 chats"); "Earlier messages" asks for THREAD_SIZE more each time, up to
THREAD_MOST."""
THREAD_MOST = MAX_PAGE
# How long a chat's read waits for the platform to say how big its customers' files are (a size not known by then
# is left out; once known it is kept, `MediaFetcher.size`).
MEDIA_SIZES_WAIT = 2.0
IMAGE_TYPES = ("image", "sticker")


class Abilities(msgspec.Struct, frozen=True):
    """What the page may offer: never an action the caller's permissions refuse."""

    act: bool
    """Claim, release, transfer, resolve, reply, mark read, notes, labels, snooze (the inbox permission)."""
    transfer_to_others: bool
    """Seeing the members a chat can go to (`team.MEMBER_NAMES`)."""
    edit_contact: bool
    """Changing the contact's card (the contacts permission)."""


class CustomerFile(msgspec.Struct, frozen=True):
    """A customer's file as a person sees it: an image shown (`image`, described by `name`), anything else named
    with its size (None: not known now)."""

    image: bool
    name: str
    size: int | None


class ChatView(msgspec.Struct, frozen=True):
    chat: ConversationDetail
    messages: list[Message]
    """The newest `shown` messages, oldest first, outbound ones with their receipts."""
    earlier_messages: bool
    """Older messages than these are in the chat."""
    failure_reasons: dict[int, str]
    """Why each failed message shown failed (the platform's error), by message id."""
    window_open: bool
    window_closes_at: datetime | None
    templates: list[Template]
    """Approved templates, offered when the window is closed."""
    members: list[MemberRef]
    """Active members other than the caller, to transfer to."""
    teams: list[TeamRef]
    """The workspace's teams, whose queues the chat can be routed to (none to whoever may not act on it)."""
    labels: list[str]
    """The workspace's labels not on the chat yet, to put on it."""
    contact: ContactView | None
    """The whole card, for a caller who may read contacts."""
    abilities: Abilities
    groundings: dict[int, dict] = {}
    """What grounded each bot reply shown that the AI agent made, by message id: {"passages": [{ref, title}],
    "prices": [a quote's fields]}."""
    resolved: bool = False
    """Resolved by a person and the customer silent since: nobody waits for an answer."""
    unread_for_you: int = 0
    """Messages the caller's member has not read (`member_chat_reads`)."""
    texts: dict[int, str] = {}
    """The text the customer got of each template message shown, by message id."""
    files: dict[int, CustomerFile] = {}
    """Each customer file shown, by message id."""
    trail: list[TrailEntry] = []
    """What the team did with the chat over the messages shown, oldest first (for callers who may read the
    chat's assignment history)."""
    handed_over: TrailEntry | None = None
    """The transfer that gave the chat to the caller, with its reason, while they hold it."""
    colours: dict[str, str] = {}
    """The workspace's label colours, by the label's name in lower case."""
    mentions: dict[int, list[NotePiece]] = {}
    """Each note shown that mentions members, as its text in pieces (a mention names its member), by message id."""
    shown: int = THREAD_SIZE
    """How many of the newest messages were asked for (`thread_size`)."""

    @property
    def widened(self) -> bool:
        """More than the first screen's messages were asked for ("Earlier messages" followed)."""
        return self.shown > THREAD_SIZE

    @property
    def more_shown(self) -> int | None:
        """How many to ask for to see THREAD_SIZE earlier messages too; None when there are none, or when the
        earliest are beyond THREAD_MOST (the Reporting API's thread has them)."""
        return min(self.shown + THREAD_SIZE, THREAD_MOST) if self.earlier_messages and \
            self.shown < THREAD_MOST else None

    def timeline(self) -> list[Message | TrailEntry]:
        """The messages and the trail in one list by time; a message before an event of the same time."""
        items: list[tuple[datetime, int, int, Message | TrailEntry]] = [
            (message.sent_at, 0, n, message) for n, message in enumerate(self.messages)]
        items += [(entry.at, 1, n, entry) for n, entry in enumerate(self.trail)]
        return [item for *_, item in sorted(items, key=lambda item: item[:3])]


class NewChat(msgspec.Struct, frozen=True):
    """A contact who has no chat yet, as a person opens them: the card, and the templates that start a chat."""

    phone: str
    name: str
    status: str
    contact: ContactView | None
    """The whole card, for a caller who may read contacts."""
    templates: list[Template]
    """Approved templates, for a caller who may send one (`chats.SEND_TEMPLATE`); empty otherwise."""


def thread_size(raw: str | int | None) -> int:
    """How many of the newest messages to show, as a page asks for them: THREAD_SIZE to THREAD_MOST (anything
    else is THREAD_SIZE)."""
    try:
        asked = int(raw) if raw is not None else THREAD_SIZE
    except ValueError:
        asked = THREAD_SIZE
    return min(max(asked, THREAD_SIZE), THREAD_MOST)


async def open_chat_view(deps: UseCaseDeps, caller: Caller, raw_phone: str,
                         shown: int = THREAD_SIZE) -> ChatView | NewChat | Refused:
    """The chat for this caller, its newest `shown` messages; a caller who may act on it has opened it (a view,
    unread cleared). A contact without a chat has nothing to open."""
    if not chats.SHOW.allows(caller):
        return chats.no_such_chat()
    act = chats.OPEN.allows(caller)
    if act:
        opened = await chats.open_chat(deps, caller, raw_phone)
        if isinstance(opened, Refused) and opened.reason is not Why.NOT_FOUND:
            return opened
    return await chat_view(deps, caller, raw_phone, act=act, shown=shown)


async def chat_view(deps: UseCaseDeps, caller: Caller, raw_phone: str, *, act: bool | None = None,
                    shown: int = THREAD_SIZE) -> ChatView | NewChat | Refused:
    """The chat as it is now, its newest `shown` messages (`thread_size`), without recording a view (a live
    refresh of an open page); a contact who has no chat yet as `NewChat`."""
    shown = thread_size(shown)
    phone = phone_or_none(raw_phone)
    now = deps.clock.now()
    found = None if phone is None else await find_detail_and_row(deps.db, caller.workspace_id, phone, now,
                                                                 caller.restricted_to)
    if phone is None or not chats.SHOW.allows(caller):
        return chats.no_such_chat()
    if found is None:
        return await _new_chat(deps, caller, phone)
    chat, ref = found
    try:
        page = await thread.messages(deps.db, caller.workspace_id, phone,
                                     {"order": "desc", "limit": str(shown), "expand": "receipts"},
                                     caller.restricted_to)
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
    workspace_labels = (await labels.labels(deps.db, caller.workspace_id)).data
    offered_labels = [] if not act else [
        label.name for label in workspace_labels if label.name.lower() not in {name.lower() for name in chat.labels}]
    replies = [message.id for message in page.data if message.sender_type == "bot"]
    groundings = await ai_usage.groundings(deps.db, caller.workspace_id, replies) if replies else {}
    contact = None
    if contacts.SHOW.allows(caller):
        try:
            contact = await contact_list.one_contact(deps.db, caller.workspace_id, phone, caller.restricted_to)
        except contact_list.ContactNotFound:
            contact = None
    messages = list(reversed(page.data))
    trail = [] if not reports.ASSIGNMENT_HISTORY.allows(caller) else await chat_trail(
        deps.db, caller.workspace_id, ref["id"], phone,
        messages[0].sent_at if page.next_cursor is not None and messages else None)
    handed = handed_over_to(trail, caller.member_id) if chat.assigned_to and \
        chat.assigned_to.user_id == caller.member_id else None
    resolved = chat.resolved_at is not None and chat.state == "AI_ONLY" and (
        last_customer is None or last_customer <= chat.resolved_at)
    return ChatView(chat=chat, messages=messages, earlier_messages=page.next_cursor is not None,
                    failure_reasons=await thread.failure_reasons(deps.db, ref["id"], page.data),
                    window_open=window_open,
                    window_closes_at=closes_at, templates=offered, members=members,
                    teams=await team_names(deps.db, caller.workspace_id) if act else [],
                    labels=offered_labels, contact=contact, groundings=groundings,
                    abilities=Abilities(act=act, transfer_to_others=transfer,
                                        edit_contact=contact is not None and contacts.EDIT_CARD.allows(caller)),
                    resolved=resolved,
                    unread_for_you=await page_queries.member_unread(deps.db, ref["id"], caller.member_id),
                    texts=await _template_texts(deps, ref["id"], messages),
                    files=await _customer_files(deps, ref["id"], phone, messages), trail=trail, handed_over=handed,
                    colours={label.name.lower(): label.colour for label in workspace_labels},
                    mentions=await mentions.note_pieces(deps.db, messages), shown=shown)


async def _new_chat(deps: UseCaseDeps, caller: Caller, phone: str) -> NewChat | Refused:
    try:
        found = await contact_list.one_contact(deps.db, caller.workspace_id, phone, caller.restricted_to)
    except contact_list.ContactNotFound:
        return chats.no_such_chat()
    offered = [] if not chats.SEND_TEMPLATE.allows(caller) else await templates.workspace_templates(
        deps.db, caller.workspace_id, status_name="APPROVED")
    return NewChat(phone=phone, name=found.name, status=found.status,
                   contact=found if contacts.SHOW.allows(caller) else None, templates=offered)


async def _template_texts(deps: UseCaseDeps, conversation_id: int, messages: list[Message]) -> dict[int, str]:
    sent = [message.id for message in messages if message.template_name and not message.text]
    if not sent:
        return {}
    return {row["id"]: filled(row["template_body"], row["template_parameters"])
            for row in await page_queries.sent_templates(deps.db, conversation_id, sent)}


async def _customer_files(deps: UseCaseDeps, conversation_id: int, phone: str,
                          messages: list[Message]) -> dict[int, CustomerFile]:
    """The customer's files shown: images described by their caption (or name), the others with their size,
    asked of the platform at once for all of them, for at most MEDIA_SIZES_WAIT."""
    theirs = {message.id: message for message in messages
              if message.media_url is not None and message.media_url == thread.media_path(phone, message.id)}
    if not theirs:
        return {}
    sizes: dict[int, int | None] = {}
    fetcher = deps.media()
    others = [row for row in await page_queries.media_ids(deps.db, conversation_id, list(theirs))
              if theirs[row["id"]].type not in IMAGE_TYPES]
    if fetcher is not None and others:

        async def size_of(message_id: int, media_id: str) -> None:
            sizes[message_id] = await fetcher.size(media_id)

        with trio.move_on_after(MEDIA_SIZES_WAIT):
            async with trio.open_nursery() as nursery:
                for row in others:
                    nursery.start_soon(size_of, row["id"], row["media_id"])
    return {message_id: CustomerFile(
        image=message.type in IMAGE_TYPES, size=sizes.get(message_id),
        name=(message.text if message.type in IMAGE_TYPES else None) or message.filename
        or f"{message.type} from the customer") for message_id, message in theirs.items()}

