-- A report's blocks, context and identity are kept as the exact JSON text Svc wrote (type json, which
-- stores its input as it is, rather than jsonb, which re-encodes it): listings send that text out
-- unchanged instead of parsing and serializing every report of a page again. No query looks inside
-- these documents.
ALTER TABLE reports
    ALTER COLUMN blocks TYPE json USING blocks::json,
    ALTER COLUMN context TYPE json USING context::json,
    ALTER COLUMN identity TYPE json USING identity::json;
