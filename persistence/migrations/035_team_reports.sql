-- Team reports and goals (docs/team.md#reports, #goals).

-- A customer's message that opened a conversation: it began a wait (nobody was waiting for an answer then). Set
-- as the message is stored; for messages stored before this column, read off the thread: a customer's message
-- that begins its chat or follows a message of the business.
ALTER TABLE messages ADD COLUMN opens_wait boolean NOT NULL DEFAULT false;
UPDATE messages m SET opens_wait = true
FROM (SELECT id, lag(direction) OVER (PARTITION BY conversation_id ORDER BY sent_at, id) AS before
      FROM messages WHERE conversation_id IS NOT NULL) t
WHERE m.id = t.id AND m.direction = 'inbound' AND m.sender_type = 'customer'
  AND (t.before IS NULL OR t.before = 'outbound');
-- Openings by time (the reports' volume) and a chat's openings newest first (the resolution time's start).
CREATE INDEX messages_openings ON messages (workspace_id, sent_at) WHERE opens_wait;
CREATE INDEX messages_chat_openings ON messages (conversation_id, sent_at DESC) WHERE opens_wait;

-- Resolves by time for one workspace (the reports' volume and resolution times).
CREATE INDEX assignment_events_resolved ON assignment_events (at) INCLUDE (conversation_id, by_member)
    WHERE event = 'resolved';

-- Goals: a target for one figure of the team report, for the whole workspace, one team or one member.
CREATE TABLE goals (
    id           bigserial PRIMARY KEY,
    workspace_id bigint NOT NULL REFERENCES workspaces (id),
    metric       text NOT NULL CHECK (metric IN ('first_response_median_seconds', 'first_response_p90_seconds',
                                                 'resolution_median_seconds', 'sla_met_percent')),
    target       double precision NOT NULL CHECK (target >= 0),
    team_id      bigint REFERENCES teams (id) ON DELETE CASCADE,
    member_id    bigint REFERENCES members (id),
    updated_by   bigint REFERENCES members (id),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    CHECK (team_id IS NULL OR member_id IS NULL)
);
-- One goal per figure and subject (the workspace: neither team nor member).
CREATE UNIQUE INDEX goals_subject ON goals (workspace_id, metric, coalesce(team_id, 0), coalesce(member_id, 0));

-- Whether a wait for a person passed its deadline before its first reply (the reports' SLA met).
CREATE INDEX sla_breaches_chat ON sla_breaches (conversation_id, deadline);

-- An agent's replies to one wait for a person, in order: whether a reply was the first to answer its wait (the
-- reports' and the team performance's first human response) is one probe, not a walk of the chat's thread.
CREATE INDEX messages_agent_replies_to_wait ON messages (conversation_id, waited_from, sent_at, id)
    WHERE sender_type = 'agent' AND direction = 'outbound' AND waited_from IS NOT NULL;

-- The window's agent replies to waits for a person, read from the index alone (the reports' first human
-- response over a month: some 15,000 replies at a million messages).
CREATE INDEX messages_agent_replies_in_window ON messages (workspace_id, sent_at)
    INCLUDE (conversation_id, waited_from, actor_id, status, id)
    WHERE sender_type = 'agent' AND direction = 'outbound' AND waited_from IS NOT NULL;
