-- Teams and availability (docs/team.md#teams, #availability): named groups of members, a member in any number of
-- them; and whether each member is there to take chats (online, busy or offline), kept with PostgreSQL's clock so
-- that every node gives the same answer.
CREATE TABLE teams (
    id           bigserial PRIMARY KEY,
    workspace_id bigint NOT NULL REFERENCES workspaces (id),
    name         text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 60),
    description  text NOT NULL DEFAULT '' CHECK (char_length(description) <= 500),
    -- Who made it and who changed it last (NULL: the operator's command line).
    created_by   bigint REFERENCES members (id),
    updated_by   bigint REFERENCES members (id),
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now()
);
-- One team of a name per workspace, whatever its case: "Billing" and "billing" are the same team.
CREATE UNIQUE INDEX teams_name ON teams (workspace_id, lower(name));

CREATE TABLE team_members (
    team_id   bigint NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    member_id bigint NOT NULL REFERENCES members (id),
    added_by  bigint REFERENCES members (id),
    added_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (team_id, member_id)
);
-- A member's teams.
CREATE INDEX team_members_member ON team_members (member_id);

-- A member's availability. `status` is what they chose (a member who never chose is online); `chosen_at` when,
-- and `after_hours_until` the next opening of the business hours when they chose it while the workspace was
-- closed (their choice then holds until that opening). `seen_at`: the last time a page of theirs was open (its live
-- stream connected) or they set their status; they are offline once the workspace's idle time has passed since.
CREATE TABLE member_availability (
    member_id         bigint PRIMARY KEY REFERENCES members (id),
    workspace_id      bigint NOT NULL REFERENCES workspaces (id),
    status            text NOT NULL DEFAULT 'online' CHECK (status IN ('online', 'busy', 'offline')),
    chosen_at         timestamptz,
    after_hours_until timestamptz,
    seen_at           timestamptz
);
CREATE INDEX member_availability_workspace ON member_availability (workspace_id);

-- The workspace's availability settings; no row: the defaults (an idle time of 300 s).
CREATE TABLE availability_settings (
    workspace_id bigint PRIMARY KEY REFERENCES workspaces (id),
    idle_seconds integer NOT NULL CHECK (idle_seconds BETWEEN 5 AND 86400),
    updated_by   bigint REFERENCES members (id),
    updated_at   timestamptz NOT NULL DEFAULT now()
);
