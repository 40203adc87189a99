"""The use cases MCP exposes as tools and the connectors as actions: for each, the declared use case (its name,
arguments, permissions and handler are the declaration's), what it does written for a model choosing a tool, and
its defaults per workspace. No I/O: `run` runs them, `tool_exposure.py` keeps MCP's per-workspace settings.

Defaults: reads are exposed, writes are not (an admin exposes each one deliberately); sends need approval in the
app, so they cannot be exposed until an admin lifts that (the settings call refuses otherwise).
"""

from __future__ import annotations

import msgspec

from inbox_actors.use_cases import ai_knowledge, bot, broadcasts, chat_reads, chats, contacts, pricing_sheets
from inbox_actors.use_cases.use_case import Kind, UseCase

__all__ = ["Action", "ACTIONS", "BY_NAME", "Kind", "input_schema"]


class Action(msgspec.Struct, frozen=True):
    """A use case offered as a tool: what a model reads to choose it, and whether a workspace offers it until an
    admin says otherwise."""

    use_case: UseCase
    title: str
    description: str
    default_exposed: bool
    default_needs_approval: bool = False
    # Arguments of which at least one must be given (not null): stated in the schema as `anyOf`.
    one_of_required: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.use_case.name

    @property
    def arguments(self) -> type:
        return self.use_case.arguments

    @property
    def kind(self) -> Kind:
        return self.use_case.kind

    @property
    def permissions(self) -> tuple[str, ...]:
        return self.use_case.permissions


ACTIONS: tuple[Action, ...] = (
    Action(chat_reads.LIST_CONVERSATIONS, "List or search chats",
           "List the inbox's chats with recent activity, newest first, or search them by contact name or phone "
           "(q). Each chat has its state, who it is assigned to or claimed by, unread count, whether it needs a "
           "reply, how long the customer has waited and its last message. Filter by state, unread, needs_reply "
           "or assigned_to; pass next_cursor back as cursor for the next page.",
           default_exposed=True),
    Action(chats.SHOW, "Read one chat",
           "One chat in full: state, assignment, waiting time and SLA, unread count, message counts, last message "
           "and the contact's card (name, email, company, status, tags).",
           default_exposed=True),
    Action(chat_reads.READ_MESSAGES, "Read a chat's messages",
           "The messages of one chat, newest first by default: who sent each (customer, bot, agent or system), "
           "when, its text or template, and its delivery status. Reading does not mark the chat read.",
           default_exposed=True),
    Action(chat_reads.UNREAD_SUMMARY, "Unread summary",
           "How many chats and customer messages are unread and how many chats wait for a person, over the last "
           "7 days, in total, per assigned member and unassigned, with the oldest unread and the longest wait.",
           default_exposed=True),
    Action(chat_reads.LIST_TEMPLATES, "List message templates",
           "The workspace's WhatsApp message templates: name, language, category, status, how many parameters "
           "each takes and its body. Only APPROVED templates can be sent.",
           default_exposed=True),
    Action(chats.SEND_TEXT, "Send a text message",
           "Send a WhatsApp text message to a contact. Free text is delivered only within 24 hours of the "
           "customer's last message (otherwise send a template). Returns the platform's message id.",
           default_exposed=False, default_needs_approval=True),
    Action(chats.SEND_TEMPLATE, "Send a template message",
           "Send an approved WhatsApp template to a contact, with its parameters in order; templates can open a "
           "conversation outside the 24-hour window. Returns the platform's message id.",
           default_exposed=False, default_needs_approval=True),
    Action(chats.CLAIM, "Claim a chat",
           "Take a chat for the member this connection acts as (it becomes HUMAN_ACTIVE, claimed by them). "
           "Returns the chat as it now is.",
           default_exposed=False),
    Action(chats.RELEASE, "Release a chat",
           "Give a claimed chat back to the team's queue (HANDOFF_PENDING), with an optional reason. Returns the "
           "chat as it now is.",
           default_exposed=False),
    Action(chats.RESOLVE, "Resolve a chat",
           "Close a chat's hand-off: the bot answers the customer again (AI_ONLY). Optional reason. Returns the "
           "chat as it now is.",
           default_exposed=False),
    Action(contacts.ADD_TAG, "Tag a contact",
           "Add a tag to the contact of this phone, keeping its other tags. Returns the contact.",
           default_exposed=False),
    Action(contacts.REMOVE_TAG, "Untag a contact",
           "Remove a tag from the contact of this phone (removing a tag it lacks changes nothing). Returns the "
           "contact.",
           default_exposed=False),
    Action(chats.TRANSFER, "Transfer a chat",
           "Hand a claimed chat to another active team member (to_user_id), with an optional reason. Returns the "
           "chat as it now is.",
           default_exposed=False),
    Action(chats.REPLY_TEXT, "Reply in a chat as the member",
           "Reply to the customer as the member this connection acts as (an agent's reply, not an automated "
           "send); replying claims a chat nobody has claimed. Free text within 24 hours of the customer's last "
           "message only. Returns the platform's message id and the chat.",
           default_exposed=False, default_needs_approval=True),
    Action(contacts.CREATE, "Create a contact",
           "Create a contact for a phone number, or update the one it already has with the fields given (tags "
           "given are added, attributes merged). Returns the contact and whether it was created.",
           default_exposed=False),
    Action(contacts.UPDATE, "Update a contact",
           "Change fields of an existing contact: name, email, company, status, notes, custom attributes "
           "(merged; null removes one). Fields left out are kept. Returns the contact.",
           default_exposed=False,
           one_of_required=("name", "email", "company", "status", "notes", "attributes")),
    Action(contacts.OPT_OUT, "Record an opt-out",
           "Record that the contact withdrew consent to messages (broadcasts skip them); repeating it keeps the "
           "first time. Returns the contact.",
           default_exposed=False),
    Action(contacts.OPT_IN, "Record an opt-in",
           "Record that the contact gave consent to messages again. Returns the contact.",
           default_exposed=False),
    Action(broadcasts.LIST, "List broadcasts",
           "The workspace's broadcasts, newest first: name, status, template, recipient count, schedule and who "
           "created each. Filter by status; pass next_cursor back as cursor for the next page.",
           default_exposed=True),
    Action(broadcasts.SHOW, "Read a broadcast",
           "One broadcast with its progress: queued, in flight, sent, delivered, read, failed, skipped and "
           "cancelled recipients, its send rate and approval.",
           default_exposed=True),
    Action(broadcasts.SEND, "Send a broadcast",
           "Send an approved template to many contacts: by phone (up to 1,000) and/or every contact having given "
           "tags, now or at scheduled_at. Waits for approval in the app when the member may not approve "
           "broadcasts. Returns the broadcast with its counts.",
           default_exposed=False, default_needs_approval=True),
    Action(pricing_sheets.QUOTE, "Look up a price",
           "Prices from the workspace's pricing sheets matching what a customer asks about (q): item, price as an "
           "exact decimal string, currency, unit and validity. The only source of a price to state to a customer.",
           default_exposed=True),
    Action(ai_knowledge.SEARCH, "Search the AI agent's knowledge",
           "The FAQ answers and article passages that best match a question (q), ranked, as the AI agent would be "
           "grounded in them.",
           default_exposed=True),
    Action(bot.USAGE, "The AI agent's usage and cost",
           "The AI agent's model calls by day and model: calls, replies, failures, tokens and cost in US dollars, "
           "with the month's spend and the credit balance (since/to: the window, default 7 days).",
           default_exposed=True),
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
