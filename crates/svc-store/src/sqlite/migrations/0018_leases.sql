-- Named leases: work that runs once among the instances on one database (housekeeping), taken by
-- one instance until a time and renewed while it runs.
CREATE TABLE leases (
    name TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    until INTEGER NOT NULL
);
