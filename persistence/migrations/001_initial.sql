-- The whole model of the inbox. Actors are the single writers of their rows; everything here is also the read
-- model that the Reporting API and the health checks query directly.

CREATE TABLE workspaces (
    id                bigserial PRIMARY KEY,
    name              text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    plan              text NOT NULL CHECK (plan IN ('starter', 'growth', 'scale')),
    -- The workspace's WhatsApp number on the platform; inbound webhooks are routed by it.
    phone_number_id   text NOT NULL UNIQUE,
    cloud_api_enabled boolean NOT NULL DEFAULT true,
    -- SLA target: how long a customer may wait for a person before the chat is breached.
    sla_seconds       integer CHECK (sla_seconds > 0),
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE members (
    id            bigserial PRIMARY KEY,
    workspace_id  bigint NOT NULL REFERENCES workspaces (id),
    name          text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    email         text,
    role          text NOT NULL CHECK (role IN ('admin', 'agent')),
    -- Same vocabulary as key scopes; admins hold {all}. A key never exceeds its creator's permissions.
    permissions   text[] NOT NULL,
    assigned_only boolean NOT NULL DEFAULT false,
    status        text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended', 'removed')),
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX members_workspace ON members (workspace_id);
CREATE UNIQUE INDEX members_email ON members (workspace_id, lower(email)) WHERE email IS NOT NULL;

-- A member's dashboard session (the web app's credential; key management accepts it).
CREATE TABLE member_sessions (
    token_hash   bytea PRIMARY KEY,
    member_id    bigint NOT NULL REFERENCES members (id),
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,
    revoked_at   timestamptz
);

CREATE TABLE api_keys (
    id                    bigserial PRIMARY KEY,
    workspace_id          bigint NOT NULL REFERENCES workspaces (id),
    created_by            bigint NOT NULL REFERENCES members (id),
    name                  text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    -- SHA-256 of the plaintext; the plaintext itself is never stored.
    key_hash              bytea NOT NULL UNIQUE CHECK (length(key_hash) = 32),
    scopes                text[] NOT NULL CHECK (cardinality(scopes) > 0),
    read_only             boolean NOT NULL,
    rate_limit_per_minute integer CHECK (rate_limit_per_minute BETWEEN 10 AND 100000),
    expires_at            timestamptz,
    revoked_at            timestamptz,
    -- Rotation: the old key names its replacement and keeps working until grace_until.
    replaced_by           bigint REFERENCES api_keys (id),
    grace_until           timestamptz,
    last_used_at          timestamptz,
    created_at            timestamptz NOT NULL DEFAULT now(),
    updated_at            timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX api_keys_workspace_active ON api_keys (workspace_id) WHERE revoked_at IS NULL;

-- Every call made with a key, refused and rate-limited ones included; kept 30 days.
CREATE TABLE key_activity (
    id           bigserial PRIMARY KEY,
    key_id       bigint NOT NULL REFERENCES api_keys (id),
    workspace_id bigint NOT NULL REFERENCES workspaces (id),
    method       text NOT NULL,
    path         text NOT NULL,
    status       smallint NOT NULL,
    ip           text NOT NULL,
    at           timestamptz NOT NULL DEFAULT now()
);
-- Pages of a key's activity walk it newest first by id.
CREATE INDEX key_activity_key_id ON key_activity (key_id, id DESC);
CREATE INDEX key_activity_at ON key_activity (at);

CREATE TABLE contacts (
    id                bigserial PRIMARY KEY,
    workspace_id      bigint NOT NULL REFERENCES workspaces (id),
    phone             text NOT NULL CHECK (phone ~ '^[0-9]{6,15}$'),
    name              text NOT NULL DEFAULT '',
    email             text,
    company           text,
    status            text NOT NULL DEFAULT 'New',
    tags              text[] NOT NULL DEFAULT '{}',
    notes             text,
    custom_attributes jsonb NOT NULL DEFAULT '{}',
    opted_out         boolean NOT NULL DEFAULT false,
    opted_out_at      timestamptz,
    -- Whether the customer's phone sends read receipts (the platform reports "read" only then).
    read_receipts     boolean NOT NULL DEFAULT true,
    version           integer NOT NULL DEFAULT 1,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workspace_id, phone)
);

CREATE TABLE conversations (
    id                       bigserial PRIMARY KEY,
    workspace_id             bigint NOT NULL REFERENCES workspaces (id),
    phone                    text NOT NULL,
    contact_id               bigint NOT NULL REFERENCES contacts (id),
    state                    text NOT NULL DEFAULT 'AI_ONLY'
                             CHECK (state IN ('AI_ONLY', 'HANDOFF_PENDING', 'HUMAN_ACTIVE')),
    -- 'whatsapp' (cloud API) or 'web_client' (a chat imported from a web-client session: text only).
    channel                  text NOT NULL DEFAULT 'whatsapp',
    handover_reason          text,
    handover_at              timestamptz,
    assigned_to              bigint REFERENCES members (id),
    claimed_by               bigint REFERENCES members (id),
    claimed_at               timestamptz,
    resolved_at              timestamptz,
    last_customer_message_at timestamptz,
    -- When the customer began waiting (spoke last, no delivered reply since), and began waiting for a person.
    waiting_since            timestamptz,
    waiting_for_person_since timestamptz,
    sla_deadline_at          timestamptz,
    unread_count             integer NOT NULL DEFAULT 0 CHECK (unread_count >= 0),
    labels                   text[] NOT NULL DEFAULT '{}',
    count_messages           integer NOT NULL DEFAULT 0,
    count_from_customer      integer NOT NULL DEFAULT 0,
    count_from_bot           integer NOT NULL DEFAULT 0,
    last_message_id          bigint,
    last_activity_at         timestamptz NOT NULL DEFAULT now(),
    -- Optimistic fencing: every write checks and bumps it, so two owners of one chat cannot both write.
    version                  bigint NOT NULL DEFAULT 1,
    created_at               timestamptz NOT NULL DEFAULT now(),
    updated_at               timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workspace_id, phone)
);
CREATE INDEX conversations_activity ON conversations (workspace_id, last_activity_at DESC, id DESC);
CREATE INDEX conversations_waiting ON conversations (workspace_id, waiting_since) WHERE waiting_since IS NOT NULL;
CREATE INDEX conversations_assignee ON conversations (workspace_id, assigned_to);

CREATE TABLE messages (
    id                  bigserial PRIMARY KEY,
    workspace_id        bigint NOT NULL REFERENCES workspaces (id),
    conversation_id     bigint NOT NULL REFERENCES conversations (id),
    platform_message_id text,
    direction           text NOT NULL CHECK (direction IN ('inbound', 'outbound')),
    sender_type         text NOT NULL CHECK (sender_type IN ('customer', 'bot', 'agent', 'system')),
    actor_id            bigint REFERENCES members (id),
    sender_label        text,
    type                text NOT NULL DEFAULT 'text',
    text                text,
    template_name       text,
    template_language   text,
    template_parameters text[],
    media_url           text,
    filename            text,
    status              text NOT NULL,
    source              text NOT NULL DEFAULT 'whatsapp',
    -- For a failed send: the platform's error, as recorded at send time.
    error_code          integer,
    error_text          text,
    -- For a reply: the customer message it answers.
    answers_message_id  bigint REFERENCES messages (id),
    sent_at             timestamptz NOT NULL DEFAULT now(),
    status_at           timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workspace_id, platform_message_id)
);
CREATE INDEX messages_conversation ON messages (conversation_id, sent_at, id);
CREATE INDEX messages_outbound ON messages (workspace_id, sent_at DESC, id DESC) WHERE direction = 'outbound';

CREATE TABLE receipts (
    message_id bigint NOT NULL REFERENCES messages (id),
    status     text NOT NULL,
    at         timestamptz NOT NULL,
    PRIMARY KEY (message_id, status)
);

-- A member opening a chat ("seen"). A key marking a chat read is not a person looking and leaves no view.
CREATE TABLE conversation_views (
    id              bigserial PRIMARY KEY,
    conversation_id bigint NOT NULL REFERENCES conversations (id),
    member_id       bigint REFERENCES members (id),
    via             text NOT NULL CHECK (via IN ('inbox', 'panel', 'api')),
    opened_at       timestamptz NOT NULL DEFAULT now(),
    marked_read     integer NOT NULL DEFAULT 0
);
CREATE INDEX conversation_views_conversation ON conversation_views (conversation_id, opened_at DESC);

CREATE TABLE assignment_events (
    id              bigserial PRIMARY KEY,
    conversation_id bigint NOT NULL REFERENCES conversations (id),
    event           text NOT NULL CHECK (event IN ('claimed', 'released', 'transferred', 'resolved')),
    at              timestamptz NOT NULL DEFAULT now(),
    from_member     bigint REFERENCES members (id),
    to_member       bigint REFERENCES members (id),
    by_member       bigint REFERENCES members (id),
    reason          text,
    source          text NOT NULL DEFAULT 'events' CHECK (source IN ('events', 'audit'))
);
CREATE INDEX assignment_events_conversation ON assignment_events (conversation_id, at DESC);

CREATE TABLE templates (
    id              bigserial PRIMARY KEY,
    workspace_id    bigint NOT NULL REFERENCES workspaces (id),
    name            text NOT NULL,
    language        text NOT NULL,
    category        text NOT NULL DEFAULT 'UTILITY',
    status          text NOT NULL DEFAULT 'APPROVED',
    parameter_count integer NOT NULL DEFAULT 0 CHECK (parameter_count >= 0),
    body            text NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workspace_id, name, language)
);

-- The rule-based bot: keywords of a question -> the answer.
CREATE TABLE bot_answers (
    id           bigserial PRIMARY KEY,
    workspace_id bigint NOT NULL REFERENCES workspaces (id),
    keywords     text[] NOT NULL CHECK (cardinality(keywords) > 0),
    answer       text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now()
);

-- A retried send with the same Idempotency-Key gets the first answer back.
CREATE TABLE idempotent_requests (
    workspace_id    bigint NOT NULL REFERENCES workspaces (id),
    idempotency_key text NOT NULL,
    request_hash    bytea NOT NULL,
    response_status smallint NOT NULL,
    response_body   jsonb NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, idempotency_key)
);

CREATE TABLE webhook_configs (
    workspace_id        bigint PRIMARY KEY REFERENCES workspaces (id),
    endpoint_url        text NOT NULL,
    events              text[] NOT NULL DEFAULT '{}',
    enabled             boolean NOT NULL DEFAULT true,
    -- HMAC signing needs the secret itself, so it is kept (and shown once when rotated).
    signing_secret      text NOT NULL,
    credit_alert_levels integer[] NOT NULL DEFAULT '{}',
    updated_at          timestamptz,
    updated_by          bigint REFERENCES members (id)
);

-- Written in the same transaction as the change that emits the event; delivered afterwards.
CREATE TABLE webhook_outbox (
    id             bigserial PRIMARY KEY,
    workspace_id   bigint NOT NULL REFERENCES workspaces (id),
    event          text NOT NULL,
    correlation_id text NOT NULL UNIQUE,
    actor          text NOT NULL,
    data           jsonb NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    attempts       integer NOT NULL DEFAULT 0,
    delivered_at   timestamptz,
    failed_at      timestamptz
);
CREATE INDEX webhook_outbox_pending ON webhook_outbox (workspace_id, id)
    WHERE delivered_at IS NULL AND failed_at IS NULL;

CREATE TABLE webhook_attempts (
    id           bigserial PRIMARY KEY,
    outbox_id    bigint NOT NULL REFERENCES webhook_outbox (id),
    attempt      integer NOT NULL,
    at           timestamptz NOT NULL DEFAULT now(),
    status_code  integer,
    error        text,
    duration_ms  integer NOT NULL
);
CREATE INDEX webhook_attempts_outbox ON webhook_attempts (outbox_id);

CREATE TABLE credit_ledger (
    id            bigserial PRIMARY KEY,
    workspace_id  bigint NOT NULL REFERENCES workspaces (id),
    delta         bigint NOT NULL,
    balance_after bigint NOT NULL,
    reason        text NOT NULL,
    at            timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX credit_ledger_workspace ON credit_ledger (workspace_id, at DESC);

-- Credentials are cached in each server process; any change to what decides access is announced so every
-- process drops its copies at once (the CLI writes from another process).
CREATE FUNCTION notify_access_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- Separate branches: a record field is resolved when its expression runs, and workspaces has no workspace_id.
    IF TG_TABLE_NAME = 'workspaces' THEN
        PERFORM pg_notify('inbox_access_changed', OLD.id::text);
    ELSE
        PERFORM pg_notify('inbox_access_changed', OLD.workspace_id::text);
    END IF;
    RETURN NULL;
END $$;

-- Only the columns access depends on: last_used_at and the like change on every call and must stay quiet.
CREATE TRIGGER workspaces_access_changed AFTER UPDATE OF plan, cloud_api_enabled OR DELETE ON workspaces
    FOR EACH ROW EXECUTE FUNCTION notify_access_changed();
CREATE TRIGGER members_access_changed AFTER UPDATE OF role, permissions, assigned_only, status OR DELETE ON members
    FOR EACH ROW EXECUTE FUNCTION notify_access_changed();
CREATE TRIGGER api_keys_access_changed
    AFTER UPDATE OF scopes, read_only, rate_limit_per_minute, expires_at, revoked_at, grace_until, name OR DELETE
    ON api_keys FOR EACH ROW EXECUTE FUNCTION notify_access_changed();
