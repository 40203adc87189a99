-- The bot's settings per workspace (a workspace without a row: on, no persona, no hand-off words), and the trail
-- of the chats it handed to a person. A chat's erasure takes its hand-offs with it.
CREATE TABLE bot_settings (
    workspace_id    bigint PRIMARY KEY REFERENCES workspaces (id),
    enabled         boolean NOT NULL DEFAULT true,
    persona         text NOT NULL DEFAULT '',
    handoff_message text NOT NULL DEFAULT '',
    updated_at      timestamptz NOT NULL DEFAULT now(),
    updated_by      bigint REFERENCES members (id)
);

CREATE TABLE bot_handoffs (
    id              bigserial PRIMARY KEY,
    workspace_id    bigint NOT NULL REFERENCES workspaces (id),
    conversation_id bigint NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    reason          text NOT NULL,
    at              timestamptz NOT NULL
);
CREATE INDEX bot_handoffs_window ON bot_handoffs (workspace_id, at DESC, id DESC);
