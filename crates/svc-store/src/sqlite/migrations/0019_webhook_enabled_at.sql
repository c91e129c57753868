-- When each endpoint was last turned on: events from before (from while it was off) are not sent
-- to it, however late the webhook consumer reads them. An endpoint enabled now counts from when
-- it was made, as before this column.
ALTER TABLE webhooks ADD COLUMN enabled_at INTEGER NOT NULL DEFAULT 0;
UPDATE webhooks SET enabled_at = CASE WHEN enabled THEN created_at ELSE updated_at END;
