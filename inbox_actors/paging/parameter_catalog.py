"""The query parameters of each read, as the published contract describes them (`http/openapi.json`).

The parsing itself is in `parameters`, `windows` and `cursors`; this is the description of what each call
accepts, declared once so the OpenAPI document and the reference pages in docs/ agree with the code.
"""

from __future__ import annotations

import msgspec

from inbox_actors.domain import team_audit
from inbox_actors.domain.phones import PHONE_PATTERN
from inbox_actors.paging import parameters, windows


class QueryParameter(msgspec.Struct, frozen=True):
    name: str
    type: str                      # JSON Schema type of the value: string, integer, boolean
    description: str
    enum: tuple[str, ...] = ()
    # Further JSON Schema the parsing enforces (minimum, maximum, pattern, maxLength, format...).
    rules: dict = {}
    required: bool = False

    def openapi(self) -> dict:
        schema: dict = {"type": self.type, **self.rules}
        if self.enum:
            schema["enum"] = list(self.enum)
        return {"name": self.name, "in": "query", "required": self.required, "schema": schema,
                "description": self.description}


def _p(name: str, kind: str, description: str, *enum: str, required: bool = False, **rules: object
       ) -> QueryParameter:
    return QueryParameter(name, kind, description, tuple(enum), rules, required)


# A date-time or a date; a window's bounds are also judged together (since_after_to, window_too_large), which
# JSON Schema cannot say.
_INSTANT = {"anyOf": [{"format": "date-time"}, {"format": "date"}]}
_MEMBER_ID = {"minimum": 1, "maximum": parameters.BIGINT_MAX}
_PAGE_SIZE = {"minimum": 1, "maximum": parameters.MAX_PAGE}
_SEARCH = {"maxLength": parameters.MAX_SEARCH, "pattern": r"^[^\x00-\x1f\x7f]*$"}

SINCE = _p("since", "string", "ISO 8601 date-time or YYYY-MM-DD (start of that UTC day); alias `from`", **_INSTANT)
TO = _p("to", "string", "end of the window (default now); alias `until`", **_INSTANT)
LIMIT_50 = _p("limit", "integer", "1 to 200, default 50", **_PAGE_SIZE)
LIMIT_100 = _p("limit", "integer", "1 to 200, default 100", **_PAGE_SIZE)
CURSOR = _p("cursor", "string", "the previous page's next_cursor (opaque: any other text is invalid_cursor)",
            minLength=1, maxLength=512)
STATE = _p("state", "string", "conversation state", "AI_ONLY", "HANDOFF_PENDING", "HUMAN_ACTIVE")
ASSIGNED_TO = _p("assigned_to", "integer", "user id of the assignee", **_MEMBER_ID)
Q = _p("q", "string", "part of the contact's name or phone", **_SEARCH)
LABEL = _p("label", "string", "only chats with this label (its name, whatever its case)", **_SEARCH)
SNOOZED = _p("snoozed", "boolean", "only snoozed chats (true), or the others (false: the open views)")

CONVERSATIONS = (
    _p("unread", "boolean", "chats with unopened customer messages inside the window"),
    _p("needs_reply", "boolean", "the customer spoke last and no delivered reply followed"),
    STATE, ASSIGNED_TO,
    _p("sla_breached", "boolean", "waiting for a person past the SLA deadline"),
    Q, LABEL, SNOOZED, SINCE, TO,
    _p("sort", "string", "newest activity first (default), or longest waiting first", "last_activity",
       "waiting_longest"),
    LIMIT_50, CURSOR,
)
UNANSWERED = (
    _p("older_than", "string", "<number><s|m|h|d>, default 30m, at most 90d", pattern=windows.OLDER_THAN_PATTERN),
    STATE, ASSIGNED_TO, Q, LABEL, SNOOZED, SINCE, TO, LIMIT_50, CURSOR,
)
WINDOW_ONLY = (SINCE, TO)
TEAM_REPORT = (SINCE, TO, _p("tz", "string", "an IANA time zone name: the report's days and hours (default: the "
                                           "member's own, else UTC)", minLength=1, maxLength=64))
CSAT_RESPONSES = (
    SINCE, TO,
    _p("team_id", "integer", "only ratings credited to this team", **_MEMBER_ID),
    _p("member_id", "integer", "only ratings credited to this member", **_MEMBER_ID),
    LIMIT_50, CURSOR,
)
HANDOFF_QUEUE = (LIMIT_50, CURSOR)
LEDGER = (SINCE, TO, LIMIT_50, CURSOR)
BOT_HANDOFFS = (SINCE, TO, LIMIT_50, CURSOR)
BOT_USAGE = (SINCE, TO)
BOT_REPLIES = (LIMIT_50,)
AUDIT_LOG = (
    SINCE, TO,
    _p("action", "string", "only entries of this action", *team_audit.ACTIONS),
    _p("member_id", "integer", "only entries of this acting member", **_MEMBER_ID),
    LIMIT_50, CURSOR,
)
ROSTER = (
    _p("status", "string", "which members: current (active and suspended, the default), active, suspended, removed, "
       "all", "current", "active", "suspended", "removed", "all"),
    LIMIT_100, CURSOR,
)
THREAD = (
    _p("since", "string", "only messages at or after (ISO 8601 or YYYY-MM-DD)", **_INSTANT), TO,
    _p("order", "string", "oldest first (default) or newest first", "asc", "desc"),
    _p("expand", "string", "receipts: each outbound message's receipts", "receipts"),
    LIMIT_100, CURSOR,
)
RECEIPTS = (SINCE, TO, LIMIT_100)
VIEWS = (LIMIT_100, CURSOR)
REPLIES = (
    _p("since", "string", "default 7 days ago; alias `from`", **_INSTANT), TO,
    _p("agent_id", "integer", "only replies by this member", **_MEMBER_ID),
    _p("sender_type", "string", "only replies of this kind", "agent", "bot", "system"),
    _p("phone", "string", "only this contact", pattern=PHONE_PATTERN),
    LIMIT_50, CURSOR,
)
OUTBOUND_MESSAGES = (
    _p("status", "string", "the messages' current status", "sent", "delivered", "read", "failed", "pending",
       required=True),
    _p("since", "string", "default 7 days ago (window at most 90 days); alias `from`", **_INSTANT), TO, LIMIT_50,
    CURSOR,
)
CONTACTS = (
    _p("page", "integer", "from 1, default 1", minimum=1, maximum=parameters.MAX_PAGE_NUMBER),
    LIMIT_50,
    _p("search", "string", "matches name, phone, tags and message text", **_SEARCH),
)

BROADCASTS = (
    _p("status", "string", "only broadcasts in this status", "pending_approval", "scheduled", "sending", "paused",
       "completed", "cancelled", "rejected"),
    LIMIT_50, CURSOR,
)
BROADCAST_RECIPIENTS = (
    _p("outcome", "string", "only recipients with this outcome", "queued", "in_flight", "sent", "delivered", "read",
       "failed", "skipped", "cancelled"),
    _p("limit", "integer", "1 to 200, default 100", **_PAGE_SIZE), CURSOR,
)
