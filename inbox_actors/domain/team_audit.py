"""The team audit log's vocabulary: the actions it records and how an entry names who acted. No I/O."""

from __future__ import annotations

from datetime import timedelta

CHAT_ACTIONS = {"claimed": "chat.claimed", "released": "chat.released", "transferred": "chat.transferred",
                "resolved": "chat.resolved"}
MEMBER_ADDED = "member.added"
MEMBER_CHANGED = "member.changed"
MEMBER_SUSPENDED = "member.suspended"
MEMBER_REACTIVATED = "member.reactivated"
MEMBER_REMOVED = "member.removed"
SLA_CHANGED = "sla.changed"
KEY_CREATED = "key.created"
KEY_EDITED = "key.edited"
KEY_ROTATED = "key.rotated"
KEY_REVOKED = "key.revoked"
CONTACT_DELETED = "contact.deleted"
BROADCAST_CREATED = "broadcast.created"
BROADCAST_APPROVED = "broadcast.approved"
BROADCAST_REJECTED = "broadcast.rejected"
BROADCAST_CANCELLED = "broadcast.cancelled"
BROADCAST_PAUSED = "broadcast.paused"
BROADCAST_RESUMED = "broadcast.resumed"
MCP_TOKEN_CREATED = "mcp_token.created"
MCP_TOKEN_REVOKED = "mcp_token.revoked"
MCP_ACTION_CHANGED = "mcp_action.changed"
NOTE_ADDED = "chat.note_added"
SNOOZED = "chat.snoozed"
UNSNOOZED = "chat.unsnoozed"
LABELED = "chat.labeled"
UNLABELED = "chat.unlabeled"
LABEL_CREATED = "label.created"
LABEL_CHANGED = "label.changed"
LABEL_DELETED = "label.deleted"
BOT_CHANGED = "bot.changed"
BOT_ANSWER_ADDED = "bot_answer.added"
BOT_ANSWER_REMOVED = "bot_answer.removed"
BOT_ARTICLE_ADDED = "bot_article.added"
BOT_ARTICLE_CHANGED = "bot_article.changed"
BOT_ARTICLE_REMOVED = "bot_article.removed"
PRICING_SHEET_ADDED = "pricing_sheet.added"
PRICING_SHEET_RENAMED = "pricing_sheet.renamed"
PRICING_SHEET_REMOVED = "pricing_sheet.removed"
PRICING_SHEET_IMPORTED = "pricing_sheet.imported"
PRICING_ITEM_ADDED = "pricing_item.added"
PRICING_ITEM_CHANGED = "pricing_item.changed"
PRICING_ITEM_REMOVED = "pricing_item.removed"
CANNED_RESPONSE_ADDED = "canned_response.added"
CANNED_RESPONSE_CHANGED = "canned_response.changed"
CANNED_RESPONSE_REMOVED = "canned_response.removed"
TEAM_CREATED = "team.created"
TEAM_CHANGED = "team.changed"
TEAM_DELETED = "team.deleted"
TEAM_MEMBER_ADDED = "team.member_added"
TEAM_MEMBER_REMOVED = "team.member_removed"
AVAILABILITY_CHANGED = "availability.changed"
CHAT_ROUTED = "chat.routed"
ASSIGNMENT_CHANGED = "assignment.changed"
GOAL_SET = "goal.set"
GOAL_REMOVED = "goal.removed"
CSAT_CHANGED = "csat.changed"
ACTIONS = (*CHAT_ACTIONS.values(), MEMBER_ADDED, MEMBER_CHANGED, MEMBER_SUSPENDED, MEMBER_REACTIVATED,
           MEMBER_REMOVED, SLA_CHANGED, KEY_CREATED, KEY_EDITED, KEY_ROTATED, KEY_REVOKED, CONTACT_DELETED,
           BROADCAST_CREATED, BROADCAST_APPROVED, BROADCAST_REJECTED, BROADCAST_CANCELLED, BROADCAST_PAUSED,
           BROADCAST_RESUMED, MCP_TOKEN_CREATED, MCP_TOKEN_REVOKED, MCP_ACTION_CHANGED, NOTE_ADDED,
           SNOOZED, UNSNOOZED, LABELED, UNLABELED, LABEL_CREATED, LABEL_CHANGED, LABEL_DELETED,
           BOT_CHANGED, BOT_ANSWER_ADDED, BOT_ANSWER_REMOVED, BOT_ARTICLE_ADDED, BOT_ARTICLE_CHANGED,
           BOT_ARTICLE_REMOVED, PRICING_SHEET_ADDED, PRICING_SHEET_RENAMED, PRICING_SHEET_REMOVED,
           PRICING_SHEET_IMPORTED, PRICING_ITEM_ADDED, PRICING_ITEM_CHANGED, PRICING_ITEM_REMOVED,
           CANNED_RESPONSE_ADDED, CANNED_RESPONSE_CHANGED, CANNED_RESPONSE_REMOVED, TEAM_CREATED, TEAM_CHANGED,
           TEAM_DELETED, TEAM_MEMBER_ADDED, TEAM_MEMBER_REMOVED, AVAILABILITY_CHANGED, CHAT_ROUTED,
           ASSIGNMENT_CHANGED, GOAL_SET, GOAL_REMOVED, CSAT_CHANGED)

# The spec asks for at least 30 days; a year covers an annual review.
RETENTION = timedelta(days=365)
OPERATOR = "operator"


def member_id_of(via: str) -> int | None:
    """The member an author string names ("member:<id>"); an API key's author is resolved by its creator."""
    kind, _, number = via.partition(":")
    return int(number) if kind == "member" and number.isdigit() else None


def member_subject(member_id: int) -> str:
    return f"member:{member_id}"


def team_subject(team_id: int) -> str:
    return f"team:{team_id}"


def key_subject(key_id: int) -> str:
    return f"key:{key_id}"


def broadcast_subject(broadcast_id: int) -> str:
    return f"broadcast:{broadcast_id}"


def mcp_token_subject(token_id: int) -> str:
    return f"mcp_token:{token_id}"


def mcp_action_subject(name: str) -> str:
    return f"mcp_action:{name}"


def masked_phone(phone: str) -> str:
    """A deleted contact's number as the audit log keeps it: enough to recognise, not to contact."""
    return phone[:4] + "*" * max(0, len(phone) - 6) + phone[-2:]
