-- Team queues and automatic assignment (docs/team.md#team-queues, #automatic-assignment).

-- The team a chat is routed to: it waits in that team's queue and is given to that team's members. NULL: the
-- workspace's own queue. No foreign key on purpose: a chat's row has one writer, its conversation actor, and a
-- cascade from a deleted team would change rows behind it. A team deleted leaves the id behind; readers join
-- `teams`, and a chat whose team is gone waits in the workspace's queue.
ALTER TABLE conversations ADD COLUMN team_id bigint;

-- How the workspace hands waiting chats to whoever is free. No row: automatic assignment is off.
CREATE TABLE assignment_settings (
    workspace_id bigint PRIMARY KEY REFERENCES workspaces (id),
    mode         text NOT NULL CHECK (mode IN ('off', 'round_robin', 'least_busy')),
    -- Open chats a member holds at most before automatic assignment passes them by (their own claims may exceed it).
    capacity     integer NOT NULL CHECK (capacity BETWEEN 1 AND 1000),
    updated_by   bigint REFERENCES members (id),
    updated_at   timestamptz NOT NULL DEFAULT now()
);

-- A member's open chats, counted at each assignment round.
CREATE INDEX conversations_held ON conversations (workspace_id, assigned_to) WHERE state = 'HUMAN_ACTIVE';

-- The last automatic assignment to each member (round robin's order), read from the assignment events.
CREATE INDEX assignment_events_automatic ON assignment_events (to_member, at DESC) WHERE reason = 'auto_assigned';
