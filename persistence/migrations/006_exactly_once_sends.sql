-- Exactly-once sends: an outbound message is committed as 'pending' before the platform is called, and its id
-- travels to the platform as biz_opaque_callback_data, which the platform echoes on the message's statuses.
-- The outcome (sent with the platform's id, or failed) replaces 'pending'; a crash between the platform's
-- answer and that commit leaves the row pending ("in doubt") until a status carrying its id settles it.

-- A pending message to a number that has no chat yet (the first send to it) has no conversation until its
-- outcome makes one; it names its recipient instead. Every outbound message written from now on names it.
-- A message an Idempotency-Key's request sent carries the key.
ALTER TABLE messages
    ALTER COLUMN conversation_id DROP NOT NULL,
    ADD COLUMN recipient text,
    ADD COLUMN idempotency_key text,
    ADD CONSTRAINT messages_chat
        CHECK (conversation_id IS NOT NULL OR (direction = 'outbound' AND recipient IS NOT NULL));

-- Sends in doubt, oldest first: what the in-doubt sweeper walks (only crash leftovers stay here for long).
CREATE INDEX messages_in_doubt ON messages (sent_at, id) WHERE status = 'pending';

-- The message a key's request committed before it called the platform. Once set, the key is never released
-- nor taken over as abandoned (something may have gone out): a retry answers from the message.
ALTER TABLE idempotent_requests ADD COLUMN message_id bigint REFERENCES messages (id);
