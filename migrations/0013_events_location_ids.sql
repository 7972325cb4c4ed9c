-- events: event_id now covers the location (contracts.md; lib/normalize/event-id.ts). Rows stored
-- under the old id (24 hex) get a copy under the new one, computed from their own columns exactly
-- as the code does: sha1(old id | location), 32 hex. The copy keeps ingest_version, so a row the
-- new code writes later for the same scan (higher version) wins on merge like any re-mapped row.
-- Migration 0014 then deletes the old-id rows. Re-running after a partial failure inserts copies
-- with the same key and version again: they collapse on merge (ReplacingMergeTree).
INSERT INTO events (event_id, carrier, awb, occurred_at, status, code, status_text, description, facility,
                    location, reason_code, raw_status, raw_code, mapping_version, poll_id, ingested_at, ingest_version)
SELECT substring(lower(hex(SHA1(concat(event_id, '|', location)))), 1, 32),
       carrier, awb, occurred_at, status, code, status_text, description, facility,
       location, reason_code, raw_status, raw_code, mapping_version, poll_id, ingested_at, ingest_version
FROM events
WHERE length(event_id) = 24;
