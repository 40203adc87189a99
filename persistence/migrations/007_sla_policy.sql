-- The workspace's SLA policy beyond its target: business hours (only time inside them counts toward a deadline;
-- NULL: around the clock, the shape is inbox_actors/domain/business_hours.py) and who set the policy last.
ALTER TABLE workspaces
    ADD COLUMN sla_business_hours jsonb,
    ADD COLUMN sla_updated_at     timestamptz,
    ADD COLUMN sla_updated_by     bigint REFERENCES members (id);

-- The hand-off queue: a workspace's chats waiting for a person to take them, longest waiting first.
CREATE INDEX conversations_handoff_queue
    ON conversations (workspace_id, (coalesce(waiting_for_person_since, handover_at)), id)
    WHERE state = 'HANDOFF_PENDING';
