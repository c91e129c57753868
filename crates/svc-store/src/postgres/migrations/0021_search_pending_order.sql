-- The search indexer reads the reports it has not indexed yet in (ingest_xid, id) order, 500 at a
-- time. The BRIN index of 0005 cannot give that order, and it always reads the pages filed since
-- the last VACUUM: under a sustained burst each round read and sorted every report filed since its
-- mark (on a new table, a parallel scan of the whole table twice a second: about 70 ms of three
-- processes at 60,000 reports, a quarter or more of the database's CPU during ingest). A btree in that
-- order reads the next 500 entries and stops. Bulk-loaded reports (NULL) are never read by it.
DROP INDEX reports_ingest_xid_idx;
CREATE INDEX reports_ingest_order_idx ON reports (ingest_xid, id) WHERE ingest_xid IS NOT NULL;
