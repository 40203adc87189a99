-- Customer satisfaction surveys (docs/team.md#satisfaction-surveys).

-- Whether a resolved chat is offered a survey, and its words. No row: surveys are off.
CREATE TABLE csat_settings (
    workspace_id bigint PRIMARY KEY REFERENCES workspaces (id),
    enabled      boolean NOT NULL,
    question     text NOT NULL CHECK (length(question) BETWEEN 1 AND 1024),
    -- Sent after a rating, inviting a comment; empty: no comment is asked for.
    thanks       text NOT NULL CHECK (length(thanks) <= 4096),
    updated_by   bigint REFERENCES members (id),
    updated_at   timestamptz NOT NULL DEFAULT now()
);

-- One survey offered after one resolve. The member and team it is credited to are the chat's at the resolve.
CREATE TABLE csat_surveys (
    id                bigserial PRIMARY KEY,
    workspace_id      bigint NOT NULL REFERENCES workspaces (id),
    conversation_id   bigint NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    member_id         bigint REFERENCES members (id),
    team_id           bigint,                          -- no foreign key: a team deleted leaves its ratings
    resolved_at       timestamptz NOT NULL,
    -- The survey's message (null until it is committed as pending) and what became of its send.
    message_id        bigint REFERENCES messages (id) ON DELETE SET NULL,
    status            text NOT NULL DEFAULT 'sending' CHECK (status IN ('sending', 'sent', 'not_sent')),
    created_at        timestamptz NOT NULL,
    rating            smallint CHECK (rating BETWEEN 1 AND 5),
    rated_at          timestamptz,
    comment_invited_at timestamptz,
    comment           text CHECK (length(comment) <= 4096),
    commented_at      timestamptz,
    CHECK ((rating IS NULL) = (rated_at IS NULL))
);
CREATE INDEX csat_surveys_chat ON csat_surveys (conversation_id, id DESC);
-- Ratings by time for one workspace (the team report's satisfaction).
CREATE INDEX csat_surveys_rated ON csat_surveys (workspace_id, rated_at) INCLUDE (rating, member_id, team_id)
    WHERE rated_at IS NOT NULL;

-- The chat's survey that may still take a comment: a customer's text is judged against it only while it is set, so
-- no other chat's messages read the survey table.
ALTER TABLE conversations ADD COLUMN csat_survey_id bigint;

-- Satisfaction is a figure a goal can be set for.
ALTER TABLE goals DROP CONSTRAINT goals_metric_check;
ALTER TABLE goals ADD CONSTRAINT goals_metric_check CHECK (metric IN (
    'first_response_median_seconds', 'first_response_p90_seconds', 'resolution_median_seconds', 'sla_met_percent',
    'csat_percent'));
