-- One row that readiness checks rewrite while writes are failing (see health.rs): reads keep working
-- when the server is out of disk space, so only a write can tell when writing works again.
CREATE TABLE write_probe (
    id     INTEGER PRIMARY KEY CHECK (id = 1),
    probes BIGINT NOT NULL
);
