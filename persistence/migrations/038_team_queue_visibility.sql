-- Whether a team's queue is open to its members who are limited to assigned chats: they then see (and may take)
-- the chats waiting in it for a person, beside the chats they hold (docs/team.md#team-queues). Off: they see only
-- their own chats, as before this column.
ALTER TABLE teams ADD COLUMN queue_visible_to_assigned_only boolean NOT NULL DEFAULT false;
