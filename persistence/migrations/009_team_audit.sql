-- The team audit log: every team action (a chat's claim, release, transfer and resolve; members added, changed,
-- suspended, reactivated and removed; the SLA policy; API keys created, edited, rotated and revoked), written in
-- the transaction of the change it records. Kept a year (the retention timer prunes older entries).
CREATE TABLE team_audit (
    id           bigserial PRIMARY KEY,
    workspace_id bigint NOT NULL REFERENCES workspaces (id),
    at           timestamptz NOT NULL,
    member_id    bigint REFERENCES members (id),   -- who acted (NULL: the operator's command line, the system)
    via          text NOT NULL,                    -- api_key:<id>, member:<id> (a dashboard session), operator, system
    action       text NOT NULL,
    subject      text NOT NULL,                    -- what it acted on: a chat's phone, member:<id>, key:<id>, sla
    details      jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX team_audit_window ON team_audit (workspace_id, at DESC, id DESC);
CREATE INDEX team_audit_at ON team_audit (at);
