-- Blob objects still to be deleted from the blob store. Deleting a project or expired reports
-- removes the blob rows and queues their ids here in the same transaction; the service then
-- deletes each object and its entry, and housekeeping retries what is left (the blob store was
-- unreachable, the process stopped in between), so no object outlives its row for long.
CREATE TABLE blob_deletions (
    blob_id    TEXT COLLATE "C" PRIMARY KEY,
    queued_at  BIGINT NOT NULL
);
