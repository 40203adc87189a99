-- A workspace's labels: the set its team labels chats with (Chatwoot's and Front's labels). A chat's `labels`
-- holds the names of its labels; renaming a label renames it on every chat, deleting it removes it from them.
CREATE TABLE labels (
    id           bigserial PRIMARY KEY,
    workspace_id bigint NOT NULL REFERENCES workspaces (id),
    name         text NOT NULL,
    colour       text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now()
);
-- One label of a name per workspace, whatever its case.
CREATE UNIQUE INDEX labels_name ON labels (workspace_id, lower(name));
-- The conversation lists' `label` filter.
CREATE INDEX conversations_labels ON conversations USING gin (labels);
