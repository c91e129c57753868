-- The inbox's "Drafts to review" view and its marks: the reports with an agent's draft waiting.
-- Drafts are few at any time, so a partial index of them answers both at once.
CREATE INDEX comments_drafts ON comments (report_id) WHERE draft = TRUE;
