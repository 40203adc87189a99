-- A customer's image, video, audio, document or sticker: the platform's media id and mime type (the caption is
-- the message's text, a document's file name its filename). The thread's media_url points at the service's own
-- route, which fetches the file from the platform by this id.
ALTER TABLE messages ADD COLUMN media_id text, ADD COLUMN mime_type text;
