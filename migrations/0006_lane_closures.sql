-- lane_closures: one row per closed shipment on a lane (delivered, returned to origin, cancelled),
-- written once when it closes (lib/clickhouse/lanes-closures.ts; existing shipments by 0011). The
-- windowed lane statistics (lane_stats) are computed from it alone.
-- PARTITION BY month of closed_at: a window of 90 days reads 4 monthly partitions whatever the
-- history. ORDER BY (lane, carrier, awb): a lane's rows are contiguous, so recomputing a few lanes
-- reads only their granules. ReplacingMergeTree(version): a shipment closed twice (a re-poll after
-- delivery) collapses on merge; readers take argMax by version per shipment, exact before merges.
-- lane is `carrier:origin3:destination3`, prefixed `test:` for sandbox shipments.
CREATE TABLE IF NOT EXISTS lane_closures
(
    lane String,
    carrier String,
    origin_prefix String,
    destination_prefix String,
    mode String,
    awb String,
    outcome String,
    closed_at DateTime('UTC'),
    transit_days Nullable(Float64),
    on_time Nullable(UInt8),
    first_attempt Nullable(UInt8),
    ndr_reasons Array(String),
    version UInt64,
    ingested_at DateTime('UTC')
)
ENGINE = ReplacingMergeTree(version)
PARTITION BY toYYYYMM(closed_at)
ORDER BY (lane, carrier, awb)
SETTINGS index_granularity = 1024;
