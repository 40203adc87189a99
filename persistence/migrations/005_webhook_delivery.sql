-- Outbound webhook delivery: each outbox row's outcome, the delivery log's index, the wake-up signal for the
-- endpoint actor, and the SLA breach marker the breach timer needs.

-- pending: still to attempt; delivered: a 2xx; failed: the last attempt failed (or a 3xx/4xx rejected it);
-- skipped: not to be delivered (no endpoint, disabled, not subscribed, or not in the plan when its turn came).
-- A test event (`test`) is delivered by the call that asked for it, never by the endpoint actor.
ALTER TABLE webhook_outbox
    ADD COLUMN outcome text NOT NULL DEFAULT 'pending'
        CHECK (outcome IN ('pending', 'delivered', 'failed', 'skipped')),
    ADD COLUMN test boolean NOT NULL DEFAULT false,
    ADD COLUMN last_attempt_at timestamptz;
UPDATE webhook_outbox SET outcome = CASE WHEN delivered_at IS NOT NULL THEN 'delivered'
                                         WHEN failed_at IS NOT NULL THEN 'failed' ELSE 'pending' END;

-- What the endpoint actor walks: a workspace's pending rows in commit-ish (id) order.
DROP INDEX webhook_outbox_pending;
CREATE INDEX webhook_outbox_pending ON webhook_outbox (workspace_id, id) WHERE outcome = 'pending' AND NOT test;
-- The delivery log, newest first, per event or not; skipped rows are not part of it.
CREATE INDEX webhook_outbox_log ON webhook_outbox (workspace_id, id DESC) WHERE outcome <> 'skipped';
CREATE INDEX webhook_outbox_log_event ON webhook_outbox (workspace_id, event, id DESC) WHERE outcome <> 'skipped';
-- Retention prunes finished rows by age.
CREATE INDEX webhook_outbox_created ON webhook_outbox (created_at) WHERE outcome <> 'pending';
CREATE INDEX webhook_attempts_outbox_attempt ON webhook_attempts (outbox_id, attempt);
DROP INDEX webhook_attempts_outbox;

-- Every process delivering for a workspace hears that it has new events (identical payloads in one transaction
-- fold into one notification, so a transaction costs one signal per workspace, not one per event).
CREATE FUNCTION notify_webhook_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('inbox_webhook_outbox', NEW.workspace_id::text);
    RETURN NULL;
END $$;
CREATE TRIGGER webhook_outbox_notify AFTER INSERT ON webhook_outbox
    FOR EACH ROW WHEN (NOT NEW.test) EXECUTE FUNCTION notify_webhook_outbox();

-- The signing secret is made on the first save; when it was last replaced (rotation).
ALTER TABLE webhook_configs ADD COLUMN secret_created_at timestamptz NOT NULL DEFAULT now();

-- The deadline whose breach was announced (sla_breached): one event per breach. A new wait for a person sets a
-- new deadline, so a deadline different from this one is unannounced.
ALTER TABLE conversations ADD COLUMN sla_breach_announced_for timestamptz;
CREATE INDEX conversations_sla_due ON conversations (sla_deadline_at)
    WHERE sla_deadline_at IS NOT NULL AND sla_breach_announced_for IS DISTINCT FROM sla_deadline_at;
