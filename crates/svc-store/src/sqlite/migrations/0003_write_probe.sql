-- One row that readiness checks rewrite while writes are failing (see health.rs): reads keep working
-- on a full disk, so only a write can tell when writing works again.
CREATE TABLE write_probe (
    id     INTEGER PRIMARY KEY CHECK (id = 1),
    probes INTEGER NOT NULL
);
