-- Templates, the bot's answers and idempotent sends: the rules their rows must keep, and the indexes their
-- reads use.

-- Meta's vocabulary for a template's category and review status.
ALTER TABLE templates
    ADD CONSTRAINT templates_category CHECK (category IN ('UTILITY', 'MARKETING', 'AUTHENTICATION')),
    ADD CONSTRAINT templates_status CHECK (status IN ('APPROVED', 'PENDING', 'REJECTED', 'PAUSED', 'DISABLED'));

-- The bot loads a workspace's answers in one read (then caches them briefly).
CREATE INDEX bot_answers_workspace ON bot_answers (workspace_id, id);

-- A reservation is a row with response_status 0 (in progress) and response_body '{}'; a finished request
-- holds the HTTP status it was answered with.
ALTER TABLE idempotent_requests
    ADD CONSTRAINT idempotent_requests_status CHECK (response_status = 0 OR response_status BETWEEN 100 AND 599),
    ADD CONSTRAINT idempotent_requests_hash CHECK (length(request_hash) = 32),
    ADD CONSTRAINT idempotent_requests_key CHECK (length(idempotency_key) BETWEEN 1 AND 200);
-- Keys live 24 hours; pruning walks them by age.
CREATE INDEX idempotent_requests_created_at ON idempotent_requests (created_at);
