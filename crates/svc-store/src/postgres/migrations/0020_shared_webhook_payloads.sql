-- One stored body for the deliveries of an event that send the same bytes (the endpoints of one
-- format): a delivery names the delivery whose body it sends (payload_key; NULL: its own). The
-- body then belongs to no one delivery: it goes with the last delivery that sends it.
ALTER TABLE webhook_payloads DROP CONSTRAINT webhook_payloads_delivery_id_fkey;
ALTER TABLE webhook_deliveries ADD COLUMN payload_key TEXT COLLATE "C";
CREATE INDEX webhook_deliveries_sharing ON webhook_deliveries (payload_key) WHERE payload_key IS NOT NULL;

CREATE FUNCTION webhook_payloads_unshared() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM webhook_payloads p
    WHERE p.delivery_id = COALESCE(OLD.payload_key, OLD.id)
      AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.id = p.delivery_id)
      AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.payload_key = p.delivery_id);
    RETURN NULL;
END
$$;
CREATE TRIGGER webhook_payloads_unshared AFTER DELETE ON webhook_deliveries
    FOR EACH ROW EXECUTE FUNCTION webhook_payloads_unshared();
