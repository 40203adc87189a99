-- Automation connectors (Zapier, Make): REST hook subscriptions, and their deliveries riding on the webhook
-- outbox. A hook wants one event; each event appended to the outbox is copied, in the same transaction, once per
-- hook of its workspace that wants it (`hook_id` set), and the workspace's webhook endpoint actor delivers those
-- copies to the hook's target as it delivers the originals to the workspace's endpoint: signed, retried on the
-- same schedule, every attempt in `webhook_attempts`, pruned after 30 days.

CREATE TABLE connector_hooks (
    id             bigserial PRIMARY KEY,
    workspace_id   bigint NOT NULL REFERENCES workspaces (id),
    platform       text NOT NULL CHECK (platform IN ('zapier', 'make')),
    event          text NOT NULL,
    target_url     text NOT NULL,
    -- HMAC signing needs the secret itself; it is shown once, in the answer to the subscribe call.
    signing_secret text NOT NULL,
    -- The key that subscribed: once it is revoked, expired or its creator is no longer active, nothing is sent.
    key_id         bigint NOT NULL REFERENCES api_keys (id),
    created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX connector_hooks_workspace_event ON connector_hooks (workspace_id, event);

-- The hook a copy goes to (NULL: the event itself, for the workspace's endpoint). No foreign key: unsubscribing
-- deletes the hook and skips its pending copies; delivered ones stay in the log until retention prunes them.
ALTER TABLE webhook_outbox ADD COLUMN hook_id bigint;
-- An event's correlation id stays unique; its copies carry the same one (it is the same event).
ALTER TABLE webhook_outbox DROP CONSTRAINT webhook_outbox_correlation_id_key;
CREATE UNIQUE INDEX webhook_outbox_correlation ON webhook_outbox (correlation_id) WHERE hook_id IS NULL;
-- A trigger's polling samples: a workspace's latest events of one kind, whatever became of their delivery.
CREATE INDEX webhook_outbox_samples ON webhook_outbox (workspace_id, event, id DESC) WHERE hook_id IS NULL AND NOT test;

CREATE FUNCTION copy_outbox_to_connector_hooks() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO webhook_outbox (workspace_id, event, correlation_id, actor, data, created_at, hook_id)
    SELECT NEW.workspace_id, NEW.event, NEW.correlation_id, NEW.actor, NEW.data, NEW.created_at, h.id
    FROM connector_hooks h WHERE h.workspace_id = NEW.workspace_id AND h.event = NEW.event ORDER BY h.id;
    RETURN NULL;
END $$;
CREATE TRIGGER webhook_outbox_connector_hooks AFTER INSERT ON webhook_outbox
    FOR EACH ROW WHEN (NEW.hook_id IS NULL AND NOT NEW.test) EXECUTE FUNCTION copy_outbox_to_connector_hooks();
