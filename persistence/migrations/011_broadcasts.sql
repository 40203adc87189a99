-- Broadcasts: one template to many recipients (POST /api/bulk-send), sent by the broadcast actor through each
-- recipient's conversation. Every recipient's state is a row here, claimed by the very statement that commits its
-- message as pending, so a broadcast resumed after a crash never sends to a recipient twice.
CREATE TABLE broadcasts (
    id                bigserial PRIMARY KEY,
    workspace_id      bigint NOT NULL REFERENCES workspaces (id),
    name              text NOT NULL,
    template_name     text NOT NULL,
    template_language text NOT NULL,
    template_category text NOT NULL,
    parameters        text[] NOT NULL DEFAULT '{}',
    -- What the audience was asked as: {"phones": <count>, "filter": {...} | null}.
    audience          jsonb NOT NULL,
    status            text NOT NULL CHECK (status IN ('pending_approval', 'scheduled', 'sending', 'paused',
                                                       'completed', 'cancelled', 'rejected')),
    paused_reason     text,
    scheduled_at      timestamptz,
    created_by        bigint NOT NULL REFERENCES members (id),
    created_via       text NOT NULL,                   -- api_key:<id> or member:<id>
    decided_by        bigint REFERENCES members (id),  -- who approved or rejected it
    decided_at        timestamptz,
    rejection_reason  text,
    cancelled_by      bigint REFERENCES members (id),
    -- Counted once, when the audience was resolved.
    recipient_count   integer NOT NULL,
    duplicate_count   integer NOT NULL DEFAULT 0,
    idempotency_key   text,
    request_hash      bytea,
    created_at        timestamptz NOT NULL,
    started_at        timestamptz,
    finished_at       timestamptz,
    UNIQUE (workspace_id, idempotency_key)
);
CREATE INDEX broadcasts_walk ON broadcasts (workspace_id, created_at DESC, id DESC);
CREATE INDEX broadcasts_due ON broadcasts (scheduled_at) WHERE status IN ('scheduled', 'sending');

CREATE TABLE broadcast_recipients (
    broadcast_id    bigint NOT NULL REFERENCES broadcasts (id),
    position        integer NOT NULL,          -- the order recipients are sent in
    phone           text,                      -- NULL once the contact was erased
    parameters      text[],                    -- NULL: the broadcast's
    -- queued (to send, now or at next_attempt_at), claimed (its message committed: the message's status says the
    -- rest), skipped (skip_reason), failed (given up before the platform accepted it), cancelled.
    state           text NOT NULL CHECK (state IN ('queued', 'claimed', 'skipped', 'failed', 'cancelled')),
    skip_reason     text,
    message_id      bigint REFERENCES messages (id) ON DELETE SET NULL,
    attempts        smallint NOT NULL DEFAULT 0,
    next_attempt_at timestamptz,
    error_code      integer,
    error_text      text,
    PRIMARY KEY (broadcast_id, position)
);
CREATE UNIQUE INDEX broadcast_recipients_phone ON broadcast_recipients (broadcast_id, phone);
CREATE INDEX broadcast_recipients_queued ON broadcast_recipients (broadcast_id, position) WHERE state = 'queued';
CREATE INDEX broadcast_recipients_by_phone ON broadcast_recipients (phone) WHERE phone IS NOT NULL;

-- A broadcast's sends, for its delivery counts; the ledger names the broadcast a send was charged for.
ALTER TABLE messages ADD COLUMN broadcast_id bigint REFERENCES broadcasts (id);
CREATE INDEX messages_broadcast ON messages (broadcast_id, sent_at) WHERE broadcast_id IS NOT NULL;
ALTER TABLE credit_ledger ADD COLUMN broadcast_id bigint REFERENCES broadcasts (id);
