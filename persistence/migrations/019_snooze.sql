-- A snoozed chat leaves the team's open views until `snoozed_until` (NULL with `snoozed`: until the customer
-- writes); the customer writing, or the time coming, ends the snooze. The snooze clock finds due ones here, so a
-- restart loses none.
ALTER TABLE conversations ADD COLUMN snoozed boolean NOT NULL DEFAULT false,
                          ADD COLUMN snoozed_until timestamptz;
CREATE INDEX conversations_snoozed_until ON conversations (snoozed_until) WHERE snoozed AND snoozed_until IS NOT NULL;
