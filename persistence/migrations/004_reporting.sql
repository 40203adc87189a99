-- The Reporting API's read model: what the reads need that the writers did not record yet, and the indexes
-- that keep every read one index walk at a million messages.

-- Substring search on names, phones, tags and message text (`q`, `search`): trigram indexes, below. A
-- production DATABASE_URL server needs the extension available (every major managed PostgreSQL has it).
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- For an outbound message: when the wait it answers began, on its own clock (a bot or system reply: when the
-- customer began waiting; an agent reply: when the customer began waiting for a person). NULL when nobody
-- was waiting. A reply's response time is sent_at minus this, unless the send failed.
ALTER TABLE messages ADD COLUMN waited_from timestamptz;

-- The earliest platform time among a chat's unread messages (NULL when none are unread): with it a window that
-- holds all of them counts them without walking them.
ALTER TABLE conversations ADD COLUMN unread_since timestamptz;

-- Unread messages are a chat's last `unread_count` customer messages in stored order; counting those inside a
-- window walks this index from the newest, reading sent_at from the index alone (the unread summary probes
-- every chat of the window; without sent_at here each probe sorted all the chat's customer messages).
CREATE INDEX messages_customer_stored ON messages (conversation_id, id DESC) INCLUDE (sent_at)
    WHERE sender_type = 'customer';
-- Outbound messages currently in a status, newest first (`/messages?status=`).
CREATE INDEX messages_outbound_status ON messages (workspace_id, status, sent_at DESC, id DESC)
    WHERE direction = 'outbound';

-- A walk's chats with messages stored since it began (see persistence/queries/reporting/conversations.py).
CREATE INDEX conversations_last_message ON conversations (workspace_id, last_message_id);

-- Longest waiting first: chats that wait, oldest wait first, then the rest (keyset on the same expression).
CREATE INDEX conversations_waiting_order
    ON conversations (workspace_id, (coalesce(waiting_since, 'infinity'::timestamptz)), id);

-- A contact has one chat at most (each is the one of its phone): the contact list and one contact join a contact
-- to its chat by this index, and a count of contacts needs no join at all.
CREATE UNIQUE INDEX conversations_contact ON conversations (contact_id);

-- Tags are matched as the comma-separated string the contact list shows.
CREATE FUNCTION tags_text(tags text[]) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN array_to_string(tags, ',');
CREATE INDEX messages_text_trgm ON messages USING gin (text gin_trgm_ops) WHERE text IS NOT NULL;
CREATE INDEX contacts_name_trgm ON contacts USING gin (name gin_trgm_ops);
CREATE INDEX contacts_phone_trgm ON contacts USING gin (phone gin_trgm_ops);
CREATE INDEX contacts_tags_trgm ON contacts USING gin (tags_text(tags) gin_trgm_ops);

-- What an open had seen: the newest message of the chat stored when it happened. Seen-by judges "since the
-- last open" by stored order (the platform stamps customer messages in whole seconds, our clock does not).
ALTER TABLE conversation_views ADD COLUMN seen_through_message_id bigint;

-- Views newest first, with a tiebreak for the keyset.
DROP INDEX conversation_views_conversation;
CREATE INDEX conversation_views_conversation ON conversation_views (conversation_id, opened_at DESC, id DESC);
