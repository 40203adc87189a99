-- The conversation actor asks "what did the customer say last?" on every bot turn and every delivered reply.
CREATE INDEX messages_latest_customer ON messages (conversation_id, sent_at DESC, id DESC)
    WHERE sender_type = 'customer';
