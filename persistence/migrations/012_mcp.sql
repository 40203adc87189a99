-- MCP (`POST /api/mcp`): its own bearer tokens, each acting as the member it was made for, kept by SHA-256 only
-- (the plaintext is shown once); and per workspace which catalog actions are exposed as tools or need approval in
-- the app. An action with no row here has the catalog's defaults (inbox_actors/mcp/catalog.py).
CREATE TABLE mcp_tokens (
    id           bigserial PRIMARY KEY,
    workspace_id bigint NOT NULL REFERENCES workspaces (id),
    member_id    bigint NOT NULL REFERENCES members (id),
    name         text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    token_hash   bytea NOT NULL UNIQUE CHECK (length(token_hash) = 32),
    created_at   timestamptz NOT NULL DEFAULT now(),
    revoked_at   timestamptz,
    last_used_at timestamptz
);
CREATE INDEX mcp_tokens_workspace ON mcp_tokens (workspace_id, id DESC);

CREATE TABLE mcp_actions (
    workspace_id   bigint NOT NULL REFERENCES workspaces (id),
    action         text NOT NULL,
    exposed        boolean NOT NULL,
    needs_approval boolean NOT NULL,
    -- Never both: an action that needs a person's approval in the app cannot be run by an assistant.
    CHECK (NOT (exposed AND needs_approval)),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, action)
);
