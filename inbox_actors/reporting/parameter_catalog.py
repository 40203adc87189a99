"""The query parameters of each read, as the published contract describes them (`http/openapi.json`).

The parsing itself is in `parameters`, `windows` and `cursors`; this is the description of what each call
accepts, declared once so the OpenAPI document and the README agree with the code.
"""

from __future__ import annotations

import msgspec


class QueryParameter(msgspec.Struct, frozen=True):
    name: str
    type: str                      # JSON Schema type of the value: string, integer, boolean
    description: str
    enum: tuple[str, ...] = ()

    def openapi(self) -> dict:
        schema: dict = {"type": self.type}
        if self.enum:
            schema["enum"] = list(self.enum)
        return {"name": self.name, "in": "query", "required": False, "schema": schema,
                "description": self.description}


def _p(name: str, kind: str, description: str, *enum: str) -> QueryParameter:
    return QueryParameter(name, kind, description, tuple(enum))


SINCE = _p("since", "string", "ISO 8601 date-time or YYYY-MM-DD (start of that UTC day); alias `from`")
TO = _p("to", "string", "end of the window (default now); alias `until`")
LIMIT_50 = _p("limit", "integer", "1 to 200, default 50")
LIMIT_100 = _p("limit", "integer", "1 to 200, default 100")
CURSOR = _p("cursor", "string", "the previous page's next_cursor (opaque)")
STATE = _p("state", "string", "conversation state", "AI_ONLY", "HANDOFF_PENDING", "HUMAN_ACTIVE")
ASSIGNED_TO = _p("assigned_to", "integer", "user id of the assignee")
Q = _p("q", "string", "part of the contact's name or phone")

CONVERSATIONS = (
    _p("unread", "boolean", "chats with unopened customer messages inside the window"),
    _p("needs_reply", "boolean", "the customer spoke last and no delivered reply followed"),
    STATE, ASSIGNED_TO,
    _p("sla_breached", "boolean", "waiting for a person past the SLA deadline"),
    Q, SINCE, TO,
    _p("sort", "string", "newest activity first (default), or longest waiting first", "last_activity",
       "waiting_longest"),
    LIMIT_50, CURSOR,
)
UNANSWERED = (
    _p("older_than", "string", "<number><s|m|h|d>, default 30m, at most 90d"),
    STATE, ASSIGNED_TO, Q, SINCE, TO, LIMIT_50, CURSOR,
)
WINDOW_ONLY = (SINCE, TO)
THREAD = (
    _p("since", "string", "only messages at or after (ISO 8601 or YYYY-MM-DD)"), TO,
    _p("order", "string", "oldest first (default) or newest first", "asc", "desc"),
    _p("expand", "string", "receipts: each outbound message's receipts", "receipts"),
    LIMIT_100, CURSOR,
)
RECEIPTS = (SINCE, TO, LIMIT_100)
VIEWS = (LIMIT_100, CURSOR)
REPLIES = (
    _p("since", "string", "default 7 days ago; alias `from`"), TO,
    _p("agent_id", "integer", "only replies by this member"),
    _p("sender_type", "string", "only replies of this kind", "agent", "bot", "system"),
    _p("phone", "string", "only this contact"),
    LIMIT_50, CURSOR,
)
OUTBOUND_MESSAGES = (
    _p("status", "string", "required: the messages' current status", "sent", "delivered", "read", "failed"),
    _p("since", "string", "default 7 days ago (window at most 90 days); alias `from`"), TO, LIMIT_50, CURSOR,
)
CONTACTS = (
    _p("page", "integer", "from 1, default 1"),
    LIMIT_50,
    _p("search", "string", "matches name, phone, tags and message text"),
)
