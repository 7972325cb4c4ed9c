-- carrier_polls: one row per carrier poll (contracts.md), as read from tracking.carrier-polls.v1.
-- Enough is kept to rebuild the carrier_poll.v1 record: the header as columns, the scans verbatim.
-- Times are DateTime('UTC') (whole seconds: 18.16 has no DateTime64); polled_at_ms keeps the
-- milliseconds of polled_at, which replay uses as "now". mode: the API key mode the poll was made
-- for ('live' carriers or 'test' = the sandbox network; the Kafka message's `mode` header).
-- ReplacingMergeTree(ingest_version): a poll written twice collapses to one row on merge; the writer
-- also skips rows already stored, so plain queries see no duplicates before a merge either.
CREATE TABLE IF NOT EXISTS carrier_polls
(
    poll_id String,
    carrier String,
    awb String,
    polled_at DateTime('UTC'),
    polled_at_ms UInt16,
    source String,
    outcome String,
    mode String,
    origin_office Nullable(String),
    origin_city Nullable(String),
    origin_state Nullable(String),
    origin_pincode Nullable(String),
    destination_office Nullable(String),
    destination_city Nullable(String),
    destination_state Nullable(String),
    destination_pincode Nullable(String),
    service_type Nullable(String),
    weight_grams Nullable(UInt32),
    booked_at Nullable(DateTime('UTC')),
    estimated_delivery_at Nullable(DateTime('UTC')),
    scans_json String,
    scan_count UInt32,
    mapping_version String,
    error Nullable(String),
    normalize_error Nullable(String),
    ingested_at DateTime('UTC'),
    ingest_version UInt64
)
ENGINE = ReplacingMergeTree(ingest_version)
PARTITION BY toYYYYMM(polled_at)
ORDER BY (carrier, awb, polled_at, poll_id)
SETTINGS index_granularity = 1024;
