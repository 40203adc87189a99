-- Canned responses (docs/inbox-app.md): a workspace's ready-made replies, each found by a short code typed after
-- "/" in the reply box (Chatwoot's canned responses, Front's message templates), and a member's time zone, in
-- which the agent inbox shows times.
CREATE TABLE canned_responses (
    id           bigserial PRIMARY KEY,
    workspace_id bigint NOT NULL REFERENCES workspaces (id),
    shortcut     text NOT NULL,
    title        text NOT NULL,
    text         text NOT NULL,
    -- Who made it and who changed it last (NULL: the operator's command line).
    created_by   bigint REFERENCES members (id),
    updated_by   bigint REFERENCES members (id),
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now()
);
-- One canned response of a shortcut per workspace, whatever its case: "/Hello" and "/hello" are the same.
CREATE UNIQUE INDEX canned_responses_shortcut ON canned_responses (workspace_id, lower(shortcut));

-- The member's IANA time zone (Asia/Kolkata), as their browser said it or they chose it; NULL: not known yet, UTC.
ALTER TABLE members ADD COLUMN time_zone text;
