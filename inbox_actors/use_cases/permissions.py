"""Who may do what: the permissions each use case needs, stated once for every front door.

A caller needs any one of a tuple's permissions; for a read, a permission's `:read` variant is enough
(`domain/scopes.covers`). The REST routes' guard checks these before a handler runs, the MCP catalog and the
connectors check them before an action runs, and the web app offers only what they allow; none of them names a
permission of its own. The vocabulary itself (which scopes exist, which have a `:read` variant) is the spec's scope
table in `domain/scopes.py`.
"""

from __future__ import annotations

from inbox_actors.domain.scopes import SCOPES

# -- chats ---------------------------------------------------------------------------------------------------
SEND = ("whatsapp_api",)
"""Sending as the API does (`POST /api/send-message`, MCP's send tools)."""
CHAT_ACTIONS = ("inbox",)
"""A member's actions on a chat: claim, release, transfer, resolve, open, mark read, reply."""
CHAT_CONTENT = ("inbox", "contacts")
"""Reading chats and their messages."""
REPLY_AIDS = ("inbox",)
"""What a member replies with besides their own words: reading the workspace's canned responses (`inbox:read`
too), as whoever may reply reads them."""
TEAM_OVERVIEW = ("inbox", "team_management")
"""What waits for the team and who is on it: the hand-off queue, the members a chat can go to."""

# -- contacts ------------------------------------------------------------------------------------------------
CONTACTS = ("contacts",)
CONTACTS_DELETE = ("contacts_delete",)
CONTACTS_EXPORT = ("contacts_export",)

# -- templates and broadcasts --------------------------------------------------------------------------------
TEMPLATES = ("templates",)
CAMPAIGNS = ("campaigns",)
APPROVE_BROADCASTS = ("campaign_approve",)
"""Approving or rejecting a broadcast; a broadcast started by a caller holding it needs no approval."""

# -- the team and its data -----------------------------------------------------------------------------------
TEAM_DATA = ("inbox", "team_management", "analytics")
"""Team accountability data, as the spec has it for the Reporting API (performance, per-chat history)."""
MESSAGE_STATISTICS = ("inbox", "contacts", "analytics")
TEAM_SETTINGS = ("team_management",)
"""The roster and the SLA policy."""
REMOVE_MEMBERS = ("team_remove_member",)
AUDIT_LOG = ("audit_view",)

# -- the bot ------------------------------------------------------------------------------------------------
BOT = ("ai_agent",)
"""Reading the bot's settings, answers, knowledge and pricing sheets."""
BOT_KNOWLEDGE = ("ai_kb_edit",)
"""The bot's FAQ answers and the AI agent's articles."""
BOT_PRICING = ("ai_pricing_edit",)
"""The pricing sheets the AI agent quotes from."""
BOT_BEHAVIOUR = ("ai_behavior_edit",)
"""The bot's persona and hand-off words."""
BOT_PROVISION = ("ai_provision",)
"""Switching the bot on or off."""
BOT_AUDIT = ("ai_audit_view",)
"""The trail of chats the bot handed to a person."""

# -- the workspace's settings and money ----------------------------------------------------------------------
SETTINGS = ("settings",)
"""Webhook settings, MCP's settings (tokens, exposed actions), the workspace's label set and its canned
responses."""
BILLING_VIEW = ("billing_view",)
BILLING_MANAGE = ("billing_manage",)
AUTOMATIONS = ("automations",)
"""The Zapier and Make connectors' triggers."""

# -- a member's own ------------------------------------------------------------------------------------------
OWN_PREFERENCES = tuple(base for base in SCOPES if base != "inbox_assigned_only")
"""A member's own display settings (the time zone the inbox shows them times in): any permission a member acts
with, as they touch nobody else's data; a member with only `:read` permissions changes nothing, this included (the
inbox then shows times in their browser's time zone)."""
