-- A long-standing integration's key may be exempt from the default per-key limit and the per-IP ceiling (the
-- spec: "Some long-standing integrations are exempt"); a limit set on the key itself still applies. Set by an
-- admin through key management and recorded in the team audit log.
ALTER TABLE api_keys ADD COLUMN limits_exempt boolean NOT NULL DEFAULT false;

-- The exemption decides access like the columns the trigger already watches: every process hears of a change.
DROP TRIGGER api_keys_access_changed ON api_keys;
CREATE TRIGGER api_keys_access_changed
    AFTER UPDATE OF scopes, read_only, rate_limit_per_minute, expires_at, revoked_at, grace_until, name,
                    limits_exempt OR DELETE
    ON api_keys FOR EACH ROW EXECUTE FUNCTION notify_access_changed();
