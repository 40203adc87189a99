-- Every SLA breach a chat announced, with whom the chat was assigned to then: the team's performance counts them
-- per member over any window (the outbox's sla_breached events are pruned once delivered).
CREATE TABLE sla_breaches (
    id              bigserial PRIMARY KEY,
    workspace_id    bigint NOT NULL REFERENCES workspaces (id),
    conversation_id bigint NOT NULL REFERENCES conversations (id),
    deadline        timestamptz NOT NULL,
    assigned_to     bigint REFERENCES members (id),
    at              timestamptz NOT NULL
);
CREATE INDEX sla_breaches_window ON sla_breaches (workspace_id, at);
-- Performance windows over assignment events and agent replies.
CREATE INDEX assignment_events_at ON assignment_events (at);
CREATE INDEX messages_agent_replies ON messages (workspace_id, sent_at) WHERE sender_type = 'agent';
