-- Whether a broadcast needed approval, kept as such: its creator lacked campaign_approve. (Derived from the
-- status before, which forgot it once a pending broadcast was cancelled.)
ALTER TABLE broadcasts ADD COLUMN approval_required boolean NOT NULL DEFAULT false;
UPDATE broadcasts SET approval_required = true
WHERE status = 'pending_approval' OR decided_by IS NOT NULL OR rejection_reason IS NOT NULL;
