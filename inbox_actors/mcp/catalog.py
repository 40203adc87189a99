"""The catalog of the inbox's actions that MCP exposes as tools: each action's name, what it does (written for a
model choosing a tool), its arguments (a msgspec struct, which is also its JSON Schema `inputSchema`), the
permissions its member needs, and its defaults per workspace. No I/O: `tools` runs them, `exposure` keeps the
per-workspace settings.

Defaults: reads are exposed, writes are not (an admin exposes each one deliberately); sends need approval in the
app, so they cannot be exposed until an admin lifts that (the settings call refuses otherwise).
"""

from __future__ import annotations

import enum
from typing import Annotated, Literal

import msgspec

from inbox_actors.domain import contact_fields
from inbox_actors.domain.conversation_states import State
from inbox_actors.domain.phones import PHONE_PATTERN
from inbox_actors.platform.templates import STATUSES as TEMPLATE_STATUSES

# Text a model may send: no control character but a line break or a tab.
_LINES = r"[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f]"
_ONE_LINE = r"^[^\x00-\x1f\x7f]*$"
MAX_TEXT = 4096
MAX_REASON = 500
MAX_PARAMETERS = 50
PAGE_LIMIT = 50
THREAD_LIMIT = 100

Phone = Annotated[str, msgspec.Meta(pattern=PHONE_PATTERN, examples=["919876543210"],
                                    description="The customer's phone number with country code, digits only "
                                                "(a leading + and spaces are ignored).")]
Reason = Annotated[str, msgspec.Meta(max_length=MAX_REASON, pattern=rf"^{_LINES}*$",
                                     description="Why, for the team's audit log (optional).")]
Tag = Annotated[str, msgspec.Meta(min_length=1, max_length=contact_fields.MAX_TAG, pattern=contact_fields.TAG_PATTERN,
                                  description="The tag, as the team uses it (case is ignored when matching).")]
Cursor = Annotated[str, msgspec.Meta(min_length=1, max_length=2000, description="The `next_cursor` of the "
                                                                                "previous page, to read on.")]


class Kind(str, enum.Enum):
    READ = "read"
    WRITE = "write"


# -- arguments: one struct per action ------------------------------------------------------------------------


class ListConversations(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    q: Annotated[str, msgspec.Meta(min_length=1, max_length=200, pattern=_ONE_LINE,
                                   description="Search text: matches the contact's name or phone.")] | None = None
    state: Annotated[State, msgspec.Meta(description="Only chats in this state: AI_ONLY (the bot answers), "
                                                     "HANDOFF_PENDING (waiting for a person), HUMAN_ACTIVE "
                                                     "(a member has it).")] | None = None
    unread: Annotated[bool, msgspec.Meta(description="Only chats with (true) or without (false) unread "
                                                     "customer messages.")] | None = None
    needs_reply: Annotated[bool, msgspec.Meta(description="Only chats whose customer spoke last and got no "
                                                          "reply yet (true), or the others (false).")] | None = None
    assigned_to: Annotated[int, msgspec.Meta(ge=1, le=2**63 - 1, description="Only chats assigned to this team "
                                                                              "member (user id).")] | None = None
    sort: Annotated[Literal["last_activity", "waiting_longest"], msgspec.Meta(
        description="last_activity (newest first, the default) or waiting_longest.")] = "last_activity"
    limit: Annotated[int, msgspec.Meta(ge=1, le=PAGE_LIMIT, description="How many chats, 1 to 50.")] = 20
    cursor: Cursor | None = None


class OneChat(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    phone: Phone


class ReadMessages(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    phone: Phone
    order: Annotated[Literal["desc", "asc"], msgspec.Meta(
        description="desc: newest first (the default); asc: oldest first.")] = "desc"
    limit: Annotated[int, msgspec.Meta(ge=1, le=THREAD_LIMIT, description="How many messages, 1 to 100.")] = 30
    cursor: Cursor | None = None


class NoArguments(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    pass


class ListTemplates(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    name: Annotated[str, msgspec.Meta(min_length=1, max_length=512, pattern=_ONE_LINE,
                                      description="Only templates of this name.")] | None = None
    language: Annotated[str, msgspec.Meta(min_length=2, max_length=15, pattern=_ONE_LINE,
                                          description="Only templates in this language (en, en_US...).")] | None = None
    status: Annotated[Literal[TEMPLATE_STATUSES], msgspec.Meta(  # type: ignore[valid-type]
        description="Only templates in this status; only APPROVED ones can be sent.")] | None = None


class SendText(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    to: Phone
    text: Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_TEXT, pattern=rf"^{_LINES}*$",
                                      description="The message text (up to 4,096 characters). The platform "
                                                  "delivers free text only within 24 hours of the customer's "
                                                  "last message; otherwise send a template.")]


class SendTemplate(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    to: Phone
    template: Annotated[str, msgspec.Meta(min_length=1, max_length=512, pattern=_ONE_LINE,
                                          description="The template's name (see list_templates).")]
    language: Annotated[str, msgspec.Meta(min_length=2, max_length=15, pattern=_ONE_LINE,
                                          description="The template's language code.")] = "en"
    parameters: Annotated[list[Annotated[str, msgspec.Meta(max_length=1024, pattern=_ONE_LINE)]],
                          msgspec.Meta(max_length=MAX_PARAMETERS,
                                       description="The values of the template's {{1}}, {{2}}... in order; as "
                                                   "many as its parameter_count.")] = []


class ChatWithReason(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    phone: Phone
    reason: Reason | None = None


class ContactTag(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    phone: Phone
    tag: Tag


# -- the catalog ---------------------------------------------------------------------------------------------

CHAT_CONTENT = ("inbox", "contacts")
TEAM_DATA = ("inbox", "team_management", "analytics")


class Action(msgspec.Struct, frozen=True):
    name: str
    title: str
    description: str
    arguments: type
    kind: Kind
    # The member needs any one of these permissions (a read: its :read variant is enough).
    permissions: tuple[str, ...]
    default_exposed: bool
    default_needs_approval: bool = False


ACTIONS: tuple[Action, ...] = (
    Action("list_conversations", "List or search chats",
           "List the inbox's chats with recent activity, newest first, or search them by contact name or phone "
           "(q). Each chat has its state, who it is assigned to or claimed by, unread count, whether it needs a "
           "reply, how long the customer has waited and its last message. Filter by state, unread, needs_reply "
           "or assigned_to; pass next_cursor back as cursor for the next page.",
           ListConversations, Kind.READ, CHAT_CONTENT, default_exposed=True),
    Action("get_conversation", "Read one chat",
           "One chat in full: state, assignment, waiting time and SLA, unread count, message counts, last message "
           "and the contact's card (name, email, company, status, tags).",
           OneChat, Kind.READ, CHAT_CONTENT, default_exposed=True),
    Action("read_messages", "Read a chat's messages",
           "The messages of one chat, newest first by default: who sent each (customer, bot, agent or system), "
           "when, its text or template, and its delivery status. Reading does not mark the chat read.",
           ReadMessages, Kind.READ, CHAT_CONTENT, default_exposed=True),
    Action("unread_summary", "Unread summary",
           "How many chats and customer messages are unread and how many chats wait for a person, over the last "
           "7 days, in total, per assigned member and unassigned, with the oldest unread and the longest wait.",
           NoArguments, Kind.READ, TEAM_DATA, default_exposed=True),
    Action("list_templates", "List message templates",
           "The workspace's WhatsApp message templates: name, language, category, status, how many parameters "
           "each takes and its body. Only APPROVED templates can be sent.",
           ListTemplates, Kind.READ, ("templates",), default_exposed=True),
    Action("send_text", "Send a text message",
           "Send a WhatsApp text message to a contact. Free text is delivered only within 24 hours of the "
           "customer's last message (otherwise send a template). Returns the platform's message id.",
           SendText, Kind.WRITE, ("whatsapp_api",), default_exposed=False, default_needs_approval=True),
    Action("send_template", "Send a template message",
           "Send an approved WhatsApp template to a contact, with its parameters in order; templates can open a "
           "conversation outside the 24-hour window. Returns the platform's message id.",
           SendTemplate, Kind.WRITE, ("whatsapp_api",), default_exposed=False, default_needs_approval=True),
    Action("claim_conversation", "Claim a chat",
           "Take a chat for the member this connection acts as (it becomes HUMAN_ACTIVE, claimed by them). "
           "Returns the chat as it now is.",
           OneChat, Kind.WRITE, ("inbox",), default_exposed=False),
    Action("release_conversation", "Release a chat",
           "Give a claimed chat back to the team's queue (HANDOFF_PENDING), with an optional reason. Returns the "
           "chat as it now is.",
           ChatWithReason, Kind.WRITE, ("inbox",), default_exposed=False),
    Action("resolve_conversation", "Resolve a chat",
           "Close a chat's hand-off: the bot answers the customer again (AI_ONLY). Optional reason. Returns the "
           "chat as it now is.",
           ChatWithReason, Kind.WRITE, ("inbox",), default_exposed=False),
    Action("add_tag", "Tag a contact",
           "Add a tag to the contact of this phone, keeping its other tags. Returns the contact.",
           ContactTag, Kind.WRITE, ("contacts",), default_exposed=False),
    Action("remove_tag", "Untag a contact",
           "Remove a tag from the contact of this phone (removing a tag it lacks changes nothing). Returns the "
           "contact.",
           ContactTag, Kind.WRITE, ("contacts",), default_exposed=False),
)
BY_NAME: dict[str, Action] = {action.name: action for action in ACTIONS}


def input_schema(action: Action) -> dict:
    """The JSON Schema of the action's arguments: an object, read from the struct that decodes them."""
    (reference,), components = msgspec.json.schema_components([action.arguments],
                                                              ref_template="#/$defs/{name}")
    name = reference["$ref"].rsplit("/", 1)[1]
    schema = dict(components.pop(name))
    schema.pop("title", None)
    schema.setdefault("properties", {})
    if components:
        schema["$defs"] = components
    return schema
