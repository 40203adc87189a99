-- Saved views (docs/inbox-app.md): a member's own named filters of the agent inbox's list (Chatwoot's custom views,
-- Front's saved searches), each the view and the filters an inbox address carries (`?view=open&label=VIP&...`).
-- A member's alone: nobody else lists, uses, renames or deletes them.
CREATE TABLE saved_views (
    id           bigserial PRIMARY KEY,
    workspace_id bigint NOT NULL REFERENCES workspaces (id),
    member_id    bigint NOT NULL REFERENCES members (id) ON DELETE CASCADE,
    name         text NOT NULL,
    -- {"view": "open", "label": "VIP", "assignee": "me", "state": "HUMAN_ACTIVE", "waiting": 30, "unread": true}:
    -- the list's filter as the use case's fields (inbox_actors/use_cases/inbox_views.py), keys left out when unset.
    filters      jsonb NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now()
);
-- One saved view of a name per member, whatever its case; the member's list, by name.
CREATE UNIQUE INDEX saved_views_name ON saved_views (member_id, lower(name));

-- A member's reads of chats, found by the member: what the list's "unread" filter and each view's unread count join
-- on for one member (the primary key leads with the chat).
CREATE INDEX member_chat_reads_member ON member_chat_reads (member_id, conversation_id);
