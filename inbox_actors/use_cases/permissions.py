"""Who may do what: the permissions each use case needs, stated once for every front door.

A caller needs any one of a tuple's permissions; for a read, a permission's `:read` variant is enough
(`domain/scopes.covers`). The REST routes' guard checks these before a handler runs, the MCP catalog and the
connectors check them before an action runs, and the web app offers only what they allow; none of them names a
permission of its own. The vocabulary itself (which scopes exist, which have a `:read` variant) is the spec's scope
table in `domain/scopes.py`.
"""

from __future__ import annotations

# -- chats ---------------------------------------------------------------------------------------------------
SEND = ("whatsapp_api",)
"""Sending as the API does (`POST /api/send-message`, MCP's send tools)."""
CHAT_ACTIONS = ("inbox",)
"""A member's actions on a chat: claim, release, transfer, resolve, open, mark read, reply."""
CHAT_CONTENT = ("inbox", "contacts")
"""Reading chats and their messages."""
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
"""Reading the bot's settings and answers."""
BOT_KNOWLEDGE = ("ai_kb_edit",)
"""Adding and removing the bot's FAQ answers."""
BOT_BEHAVIOUR = ("ai_behavior_edit",)
"""The bot's persona and hand-off words."""
BOT_PROVISION = ("ai_provision",)
"""Switching the bot on or off."""
BOT_AUDIT = ("ai_audit_view",)
"""The trail of chats the bot handed to a person."""

# -- the workspace's settings and money ----------------------------------------------------------------------
SETTINGS = ("settings",)
"""Webhook settings, MCP's settings (tokens, exposed actions) and the workspace's label set."""
BILLING_VIEW = ("billing_view",)
BILLING_MANAGE = ("billing_manage",)
AUTOMATIONS = ("automations",)
"""The Zapier and Make connectors' triggers."""
