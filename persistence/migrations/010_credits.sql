-- Credits: a workspace's balance (never below zero: the CHECK holds whatever the concurrency) and its ledger, each
-- entry with the balance after it and what it was for (a send's message, a top-up's member and note).
CREATE TABLE credit_accounts (
    workspace_id bigint PRIMARY KEY REFERENCES workspaces (id),
    balance      bigint NOT NULL DEFAULT 0 CHECK (balance >= 0),
    updated_at   timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE credit_ledger
    ADD COLUMN message_id bigint REFERENCES messages (id),
    ADD COLUMN member_id  bigint REFERENCES members (id),
    ADD COLUMN note       text,
    -- A top-up's reference (a payment's id, say): one entry per reference, so a retried top-up credits once.
    ADD COLUMN reference  text;
CREATE UNIQUE INDEX credit_ledger_reference ON credit_ledger (workspace_id, reference) WHERE reference IS NOT NULL;
CREATE INDEX credit_ledger_walk ON credit_ledger (workspace_id, at DESC, id DESC);
CREATE INDEX credit_ledger_message ON credit_ledger (message_id) WHERE message_id IS NOT NULL;
