"""The catalog of the inbox's actions that MCP exposes as tools and the connectors as actions: each action's name,
what it does (written for a model choosing a tool), its arguments (a msgspec struct, which is also its JSON Schema
`inputSchema`), the permissions its member needs, and its defaults per workspace. No I/O: `run` runs them,
`mcp/exposure.py` keeps MCP's per-workspace settings.

Defaults: reads are exposed, writes are not (an admin exposes each one deliberately); sends need approval in the
app, so they cannot be exposed until an admin lifts that (the settings call refuses otherwise).
"""

from __future__ import annotations

import enum
from datetime import datetime
from typing import Annotated, Literal

import msgspec

from inbox_actors.actions import permissions
from inbox_actors.actions.chats import MAX_REASON
from inbox_actors.domain import contact_fields
from inbox_actors.domain.conversation_states import State
from inbox_actors.domain.phones import PHONE_PATTERN
from inbox_actors.platform.payloads import MAX_PARAMETERS, MAX_TEXT
from inbox_actors.platform.templates import STATUSES as TEMPLATE_STATUSES

# Text a model may send: no control character but a line break or a tab.
_LINES = r"[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f]"
_ONE_LINE = r"^[^\x00-\x1f\x7f]*$"
MAX_BROADCAST_PHONES = 1000
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
                                                                                "previous page, to read on; pass "
                                                                                "the other arguments unchanged.")]


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


class TransferChat(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    phone: Phone
    to_user_id: Annotated[int, msgspec.Meta(ge=1, le=2**63 - 1, description="The active team member (user id) "
                                                                             "who takes the chat over.")]
    reason: Reason | None = None


class ReplyInChat(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    phone: Phone
    text: Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_TEXT, pattern=rf"^{_LINES}*$",
                                      description="The reply (up to 4,096 characters), sent as the member this "
                                                  "connection acts as. Within 24 hours of the customer's last "
                                                  "message only.")]


# The contact card's rules, stated in the schema so that what it calls valid is what the card takes: a name or
# status on one line and not blank once trimmed; custom attributes' names and values as it stores them.
_FILLED_LINE = r"^[^\x00-\x1f\x7f]*[^\s\x00-\x1f\x7f\x85][^\x00-\x1f\x7f]*$"
ContactName = Annotated[str, msgspec.Meta(min_length=1, max_length=contact_fields.MAX_NAME, pattern=_FILLED_LINE,
                                          description="The contact's name.")]
Email = Annotated[str, msgspec.Meta(max_length=contact_fields.MAX_EMAIL,
                                    pattern=contact_fields.EMAIL_OR_EMPTY_PATTERN,
                                    description="Email address; an empty string clears it.")]
Company = Annotated[str, msgspec.Meta(max_length=contact_fields.MAX_COMPANY, pattern=_ONE_LINE,
                                      description="Company; an empty string clears it.")]
ContactStatus = Annotated[str, msgspec.Meta(min_length=1, max_length=contact_fields.MAX_STATUS, pattern=_FILLED_LINE,
                                            description="The contact's status in the team's pipeline (New, Lead, "
                                                        "Customer...).")]
Notes = Annotated[str, msgspec.Meta(max_length=contact_fields.MAX_NOTES, pattern=rf"^{_LINES}*$",
                                    description="Free notes about the contact; an empty string clears them.")]
AttributeName = Annotated[str, msgspec.Meta(max_length=contact_fields.MAX_ATTRIBUTE_KEY, pattern=_FILLED_LINE)]
_EXACT = contact_fields.MAX_ATTRIBUTE_INTEGER  # beyond it a number would not come back as sent
AttributeValue = (Annotated[str, msgspec.Meta(max_length=contact_fields.MAX_ATTRIBUTE_TEXT, pattern=r"^[^\x00]*$")]
                  | Annotated[int, msgspec.Meta(ge=-_EXACT, le=_EXACT)]
                  | Annotated[float, msgspec.Meta(ge=-_EXACT, le=_EXACT)] | bool)


class CreateContactArgs(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    phone: Phone
    name: ContactName
    email: Email | None = None
    company: Company | None = None
    status: ContactStatus | None = None
    tags: Annotated[list[Tag], msgspec.Meta(max_length=contact_fields.MAX_TAGS,
                                            description="Tags to add (the contact's other tags are kept).")] = []
    notes: Notes | None = None
    attributes: Annotated[dict[AttributeName, AttributeValue], msgspec.Meta(
        max_length=contact_fields.MAX_ATTRIBUTES,
        description="Custom attributes to set (merged into the contact's others).")] | None = None


class UpdateContactArgs(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    phone: Phone
    name: ContactName | None = None
    email: Email | None = None
    company: Company | None = None
    status: ContactStatus | None = None
    notes: Notes | None = None
    attributes: Annotated[dict[AttributeName, AttributeValue | None], msgspec.Meta(
        min_length=1, max_length=contact_fields.MAX_ATTRIBUTES,
        description="Custom attributes to merge in; null removes one.")] | None = None


BroadcastStatus = Literal["pending_approval", "scheduled", "sending", "paused", "completed", "cancelled", "rejected"]


class ListBroadcasts(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    status: Annotated[BroadcastStatus, msgspec.Meta(description="Only broadcasts in this status.")] | None = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=PAGE_LIMIT, description="How many broadcasts, 1 to 50.")] = 20
    cursor: Cursor | None = None


class OneBroadcast(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    broadcast_id: Annotated[int, msgspec.Meta(ge=1, le=2**63 - 1, description="The broadcast's id.")]


class SendBroadcast(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    template: Annotated[str, msgspec.Meta(min_length=1, max_length=512, pattern=_ONE_LINE,
                                          description="The approved template's name (see list_templates).")]
    language: Annotated[str, msgspec.Meta(min_length=2, max_length=15, pattern=_ONE_LINE,
                                          description="The template's language code.")] = "en"
    parameters: Annotated[list[Annotated[str, msgspec.Meta(max_length=1024, pattern=_ONE_LINE)]],
                          msgspec.Meta(max_length=MAX_PARAMETERS,
                                       description="The template's parameters, the same for every recipient.")] = []
    phones: Annotated[list[Phone], msgspec.Meta(max_length=MAX_BROADCAST_PHONES,
                                                description="Recipients by phone (up to 1,000; for more, address "
                                                            "contacts by tags).")] = []
    tags: Annotated[list[Tag], msgspec.Meta(max_length=20, description="Also every contact having all these "
                                                                       "tags.")] = []
    contact_status: Annotated[str, msgspec.Meta(min_length=1, max_length=100, pattern=_ONE_LINE,
                                                description="With tags: only contacts in this status.")] | None = None
    name: Annotated[str, msgspec.Meta(min_length=1, max_length=200, pattern=_ONE_LINE,
                                      description="A name for the team's broadcast list.")] | None = None
    scheduled_at: Annotated[datetime, msgspec.Meta(tz=True, description="When to send (ISO 8601 with a time zone); "
                                                               "now when left out.")] | None = None


# -- the catalog ---------------------------------------------------------------------------------------------

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
    # Arguments of which at least one must be given (not null): stated in the schema as `anyOf`.
    one_of_required: tuple[str, ...] = ()


ACTIONS: tuple[Action, ...] = (
    Action("list_conversations", "List or search chats",
           "List the inbox's chats with recent activity, newest first, or search them by contact name or phone "
           "(q). Each chat has its state, who it is assigned to or claimed by, unread count, whether it needs a "
           "reply, how long the customer has waited and its last message. Filter by state, unread, needs_reply "
           "or assigned_to; pass next_cursor back as cursor for the next page.",
           ListConversations, Kind.READ, permissions.CHAT_CONTENT, default_exposed=True),
    Action("get_conversation", "Read one chat",
           "One chat in full: state, assignment, waiting time and SLA, unread count, message counts, last message "
           "and the contact's card (name, email, company, status, tags).",
           OneChat, Kind.READ, permissions.CHAT_CONTENT, default_exposed=True),
    Action("read_messages", "Read a chat's messages",
           "The messages of one chat, newest first by default: who sent each (customer, bot, agent or system), "
           "when, its text or template, and its delivery status. Reading does not mark the chat read.",
           ReadMessages, Kind.READ, permissions.CHAT_CONTENT, default_exposed=True),
    Action("unread_summary", "Unread summary",
           "How many chats and customer messages are unread and how many chats wait for a person, over the last "
           "7 days, in total, per assigned member and unassigned, with the oldest unread and the longest wait.",
           NoArguments, Kind.READ, permissions.TEAM_DATA, default_exposed=True),
    Action("list_templates", "List message templates",
           "The workspace's WhatsApp message templates: name, language, category, status, how many parameters "
           "each takes and its body. Only APPROVED templates can be sent.",
           ListTemplates, Kind.READ, permissions.TEMPLATES, default_exposed=True),
    Action("send_text", "Send a text message",
           "Send a WhatsApp text message to a contact. Free text is delivered only within 24 hours of the "
           "customer's last message (otherwise send a template). Returns the platform's message id.",
           SendText, Kind.WRITE, permissions.SEND, default_exposed=False, default_needs_approval=True),
    Action("send_template", "Send a template message",
           "Send an approved WhatsApp template to a contact, with its parameters in order; templates can open a "
           "conversation outside the 24-hour window. Returns the platform's message id.",
           SendTemplate, Kind.WRITE, permissions.SEND, default_exposed=False, default_needs_approval=True),
    Action("claim_conversation", "Claim a chat",
           "Take a chat for the member this connection acts as (it becomes HUMAN_ACTIVE, claimed by them). "
           "Returns the chat as it now is.",
           OneChat, Kind.WRITE, permissions.CHAT_ACTIONS, default_exposed=False),
    Action("release_conversation", "Release a chat",
           "Give a claimed chat back to the team's queue (HANDOFF_PENDING), with an optional reason. Returns the "
           "chat as it now is.",
           ChatWithReason, Kind.WRITE, permissions.CHAT_ACTIONS, default_exposed=False),
    Action("resolve_conversation", "Resolve a chat",
           "Close a chat's hand-off: the bot answers the customer again (AI_ONLY). Optional reason. Returns the "
           "chat as it now is.",
           ChatWithReason, Kind.WRITE, permissions.CHAT_ACTIONS, default_exposed=False),
    Action("add_tag", "Tag a contact",
           "Add a tag to the contact of this phone, keeping its other tags. Returns the contact.",
           ContactTag, Kind.WRITE, permissions.CONTACTS, default_exposed=False),
    Action("remove_tag", "Untag a contact",
           "Remove a tag from the contact of this phone (removing a tag it lacks changes nothing). Returns the "
           "contact.",
           ContactTag, Kind.WRITE, permissions.CONTACTS, default_exposed=False),
    Action("transfer_conversation", "Transfer a chat",
           "Hand a claimed chat to another active team member (to_user_id), with an optional reason. Returns the "
           "chat as it now is.",
           TransferChat, Kind.WRITE, permissions.CHAT_ACTIONS, default_exposed=False),
    Action("reply_in_chat", "Reply in a chat as the member",
           "Reply to the customer as the member this connection acts as (an agent's reply, not an automated "
           "send); replying claims a chat nobody has claimed. Free text within 24 hours of the customer's last "
           "message only. Returns the platform's message id and the chat.",
           ReplyInChat, Kind.WRITE, permissions.CHAT_ACTIONS, default_exposed=False, default_needs_approval=True),
    Action("create_contact", "Create a contact",
           "Create a contact for a phone number, or update the one it already has with the fields given (tags "
           "given are added, attributes merged). Returns the contact and whether it was created.",
           CreateContactArgs, Kind.WRITE, permissions.CONTACTS, default_exposed=False),
    Action("update_contact", "Update a contact",
           "Change fields of an existing contact: name, email, company, status, notes, custom attributes "
           "(merged; null removes one). Fields left out are kept. Returns the contact.",
           UpdateContactArgs, Kind.WRITE, permissions.CONTACTS, default_exposed=False,
           one_of_required=("name", "email", "company", "status", "notes", "attributes")),
    Action("opt_out_contact", "Record an opt-out",
           "Record that the contact withdrew consent to messages (broadcasts skip them); repeating it keeps the "
           "first time. Returns the contact.",
           OneChat, Kind.WRITE, permissions.CONTACTS, default_exposed=False),
    Action("opt_in_contact", "Record an opt-in",
           "Record that the contact gave consent to messages again. Returns the contact.",
           OneChat, Kind.WRITE, permissions.CONTACTS, default_exposed=False),
    Action("list_broadcasts", "List broadcasts",
           "The workspace's broadcasts, newest first: name, status, template, recipient count, schedule and who "
           "created each. Filter by status; pass next_cursor back as cursor for the next page.",
           ListBroadcasts, Kind.READ, permissions.CAMPAIGNS, default_exposed=True),
    Action("get_broadcast", "Read a broadcast",
           "One broadcast with its progress: queued, in flight, sent, delivered, read, failed, skipped and "
           "cancelled recipients, its send rate and approval.",
           OneBroadcast, Kind.READ, permissions.CAMPAIGNS, default_exposed=True),
    Action("send_broadcast", "Send a broadcast",
           "Send an approved template to many contacts: by phone (up to 1,000) and/or every contact having given "
           "tags, now or at scheduled_at. Waits for approval in the app when the member may not approve "
           "broadcasts. Returns the broadcast with its counts.",
           SendBroadcast, Kind.WRITE, permissions.CAMPAIGNS, default_exposed=False, default_needs_approval=True),
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
    if action.one_of_required:
        schema["anyOf"] = [{"required": [key], "properties": {key: {"not": {"type": "null"}}}}
                           for key in action.one_of_required]
    return schema
