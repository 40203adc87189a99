-- Members mentioned in internal notes (`@Name` or `@[Name](member:ID)`, inbox_actors/team/mentions.py): one row a
-- note and member, written with the note in its transaction by the chat's conversation actor. `spans` holds where
-- the note's text names them (start and end character offsets, in pairs), so the thread shows each mention as it
-- was resolved when written, whatever members are called later. `seen_at` is set when the member opens the chat
-- (or marks their mentions seen); a member's own mention of themselves is seen when written.
CREATE TABLE note_mentions (
    message_id      bigint NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
    member_id       bigint NOT NULL REFERENCES members (id) ON DELETE CASCADE,
    workspace_id    bigint NOT NULL REFERENCES workspaces (id),
    conversation_id bigint NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    spans           integer[] NOT NULL CHECK (cardinality(spans) >= 2 AND cardinality(spans) % 2 = 0),
    mentioned_at    timestamptz NOT NULL,
    seen_at         timestamptz,
    PRIMARY KEY (message_id, member_id)
);
-- A member's mentions, newest first (the Mentions page), and the ones not seen yet (its count; a chat opened).
CREATE INDEX note_mentions_member ON note_mentions (member_id, mentioned_at DESC, message_id DESC);
CREATE INDEX note_mentions_unseen ON note_mentions (member_id, conversation_id) WHERE seen_at IS NULL;
