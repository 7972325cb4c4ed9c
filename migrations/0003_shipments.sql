-- shipments: the latest state per carrier + AWB (contracts.md), kept apart per mode ('live', or
-- 'test' for the sandbox network, whose AWBs may look like live ones). Every normalized poll adds a row;
-- ReplacingMergeTree(version) keeps the one with the highest version (the poll's polled_at in epoch
-- ms, so a late re-delivered older poll never wins over a newer one). Until a merge several rows may
-- exist per AWB: read the latest with argMax(col, version) GROUP BY carrier, awb, mode, or with FINAL.
-- No time partitioning: rows of one shipment must share a partition for the replacement to happen.
-- transit_days: first physical scan to delivery in days (not rounded), delivered shipments only.
CREATE TABLE IF NOT EXISTS shipments
(
    carrier String,
    awb String,
    mode String,
    status String,
    stage String,
    is_rto UInt8,
    origin_pincode Nullable(String),
    destination_pincode Nullable(String),
    lane Nullable(String),
    first_scan_at DateTime('UTC'),
    first_physical_scan_at Nullable(DateTime('UTC')),
    last_scan_at DateTime('UTC'),
    delivered_at Nullable(DateTime('UTC')),
    estimated_delivery_at Nullable(DateTime('UTC')),
    transit_days Nullable(Float64),
    attempts UInt16,
    hub_count UInt16,
    unmapped_scans UInt16,
    updated_at DateTime('UTC'),
    version UInt64,
    poll_id String,
    mapping_version String,
    ingested_at DateTime('UTC'),
    ingest_version UInt64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (carrier, awb, mode)
SETTINGS index_granularity = 1024;
