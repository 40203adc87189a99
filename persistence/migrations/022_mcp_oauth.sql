-- MCP's OAuth connection flow (docs/mcp.md, "Connecting with OAuth"): a client registers itself (RFC 7591), a
-- member with the `settings` permission approves it in the web app and chooses the actions it gets, the client
-- trades the one-time code (PKCE S256) for an access token and a refresh token. Every secret here is kept as its
-- SHA-256 only; the plaintext is in one answer and never stored.
--
-- The access token is an MCP token (mcp_tokens): the endpoint looks it up, refuses it once revoked and applies the
-- workspace's exposure to it exactly as for a token made through the API. A connection is one mcp_tokens row
-- whose hash is replaced at each refresh, so the token list shows one row per connected client and revoking it
-- (POST /api/mcp/tokens/{id}/revoke) ends the connection, refresh tokens included.
ALTER TABLE mcp_tokens
    ADD COLUMN expires_at timestamptz,  -- NULL: until revoked (a token made through the API or the CLI)
    ADD COLUMN actions    text[],       -- NULL: every action the workspace exposes; else only those of these it exposes
    ADD COLUMN oauth_client_id text;    -- the client a connection's token belongs to (NULL: not made by OAuth)

-- Clients as they registered (RFC 7591): their metadata without the secret; a confidential client's secret by
-- its hash, a public client (token_endpoint_auth_method "none") has none.
CREATE TABLE mcp_oauth_clients (
    client_id          text PRIMARY KEY CHECK (length(client_id) BETWEEN 1 AND 100),
    metadata           jsonb NOT NULL,
    client_secret_hash bytea CHECK (length(client_secret_hash) = 32),
    created_at         timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE mcp_tokens ADD FOREIGN KEY (oauth_client_id) REFERENCES mcp_oauth_clients (client_id);
-- A registration prunes clients that never connected (no token, no code): unauthenticated registrations would
-- otherwise pile up.
CREATE INDEX mcp_tokens_oauth_client ON mcp_tokens (oauth_client_id) WHERE oauth_client_id IS NOT NULL;
CREATE INDEX mcp_oauth_clients_created ON mcp_oauth_clients (created_at);

-- Authorization codes: what the member approved, for one exchange within minutes. `token_id` is the connection
-- its exchange opened: a code presented again revokes it (RFC 6749 4.1.2).
CREATE TABLE mcp_oauth_codes (
    id                    bigserial PRIMARY KEY,
    code_hash             bytea NOT NULL UNIQUE CHECK (length(code_hash) = 32),
    client_id             text NOT NULL REFERENCES mcp_oauth_clients (client_id),
    workspace_id          bigint NOT NULL REFERENCES workspaces (id),
    member_id             bigint NOT NULL REFERENCES members (id),
    approved_via          text NOT NULL,      -- member:<id>, as the audit log names the session that approved
    code_challenge        text NOT NULL,      -- PKCE, S256 only
    redirect_uri          text NOT NULL,
    redirect_uri_explicit boolean NOT NULL,   -- the token request must then name the same redirect_uri
    resource              text NOT NULL,      -- RFC 8707: the MCP endpoint the token is for
    actions               text[] NOT NULL,
    created_at            timestamptz NOT NULL DEFAULT now(),
    expires_at            timestamptz NOT NULL,
    used_at               timestamptz,
    token_id              bigint REFERENCES mcp_tokens (id)
);
CREATE INDEX mcp_oauth_codes_expiry ON mcp_oauth_codes (expires_at);
CREATE INDEX mcp_oauth_codes_client ON mcp_oauth_codes (client_id);

-- Refresh tokens, rotated on use: each use marks the one presented used and issues the next. A used one presented
-- again means two holders, so it revokes the connection (OAuth 2.1 4.3.1).
CREATE TABLE mcp_oauth_refresh_tokens (
    id          bigserial PRIMARY KEY,
    token_hash  bytea NOT NULL UNIQUE CHECK (length(token_hash) = 32),
    token_id    bigint NOT NULL REFERENCES mcp_tokens (id),
    client_id   text NOT NULL REFERENCES mcp_oauth_clients (client_id),
    resource    text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    used_at     timestamptz
);
CREATE INDEX mcp_oauth_refresh_tokens_connection ON mcp_oauth_refresh_tokens (token_id);
CREATE INDEX mcp_oauth_refresh_tokens_expiry ON mcp_oauth_refresh_tokens (expires_at);
