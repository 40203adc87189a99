-- Internal notes on a chat: a member's words for the team, never sent to the customer. A note is a message of
-- the chat's thread with direction 'note' (sender_type 'agent', type 'note', status 'internal'), so the thread
-- shows it in order; every read that counts customer messages, replies or sends looks at 'inbound' or
-- 'outbound' only, so a note is none of those.
ALTER TABLE messages DROP CONSTRAINT messages_direction_check;
ALTER TABLE messages ADD CONSTRAINT messages_direction_check CHECK (direction IN ('inbound', 'outbound', 'note'));
