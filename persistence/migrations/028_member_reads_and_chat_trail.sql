-- What each member has read of each chat, for the agent inbox's pages: a member opening a chat (or marking it
-- read) has read every message stored so far, for them alone. The chat's own `unread_count` (the API's: since
-- anyone last opened it or a key marked it read) is unchanged by this.
CREATE TABLE member_chat_reads (
    conversation_id         bigint NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    member_id               bigint NOT NULL REFERENCES members (id) ON DELETE CASCADE,
    read_through_message_id bigint NOT NULL,
    read_at                 timestamptz NOT NULL,
    PRIMARY KEY (conversation_id, member_id)
);

-- The chat's newest customer message (stored order), kept by the conversation actor with each one it stores: a
-- chat is unread for a member when it is newer than what they read, with no walk of its messages.
ALTER TABLE conversations ADD COLUMN last_customer_message_id bigint;
UPDATE conversations c SET last_customer_message_id = (
    SELECT max(m.id) FROM messages m WHERE m.conversation_id = c.id AND m.sender_type = 'customer');

-- Messages up to this id count as read by every member: those the team had read when per-member reading began
-- (all but the chat's unread ones), so that no chat turns unread for anyone on the upgrade. New chats start at 0.
ALTER TABLE conversations ADD COLUMN read_by_everyone_through bigint NOT NULL DEFAULT 0;
UPDATE conversations c SET read_by_everyone_through = coalesce(CASE
    WHEN c.unread_count = 0 THEN (SELECT max(m.id) FROM messages m WHERE m.conversation_id = c.id)
    ELSE (SELECT min(u.id) - 1 FROM (SELECT m.id FROM messages m
                                     WHERE m.conversation_id = c.id AND m.sender_type = 'customer'
                                     ORDER BY m.id DESC LIMIT c.unread_count) u)
END, 0);

-- A chat's trail (labels put on and taken off, snoozes) is read from the team audit log by the chat's phone.
CREATE INDEX team_audit_subject ON team_audit (workspace_id, subject, at);
