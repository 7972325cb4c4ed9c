-- analysis_shipments: one row per shipment of each completed shipment analysis (contracts.md
-- "Shipment analyzer"), written when the analysis completes, so analysts can study what customers
-- analyse. The columns are the analysis' shipments CSV (GET /v1/analyses/{id}/shipments), plus the
-- analysis, its key and mode, and `result` (found | not_found | error). Empty strings where the CSV
-- is empty (no carrier detected, no lane...). ReplacingMergeTree: an analysis written again (a
-- restart between completing and writing) collapses to one row per shipment; count with FINAL or
-- uniqExact(analysis_id, carrier, awb) for exact figures before a merge.
CREATE TABLE IF NOT EXISTS analysis_shipments
(
    analysis_id String,
    key_prefix String,
    mode String,
    completed_at DateTime('UTC'),
    awb String,
    carrier String,
    order_id String,
    payment_mode String,
    result String,
    status String,
    current_stage String,
    outcome String,
    attempts UInt16,
    first_attempt_delivered Nullable(UInt8),
    ndr_reasons Array(String),
    transit_days Nullable(Float64),
    origin_pincode String,
    destination_pincode String,
    destination_state String,
    lane String,
    carrier_edd Nullable(DateTime('UTC')),
    delivered_at Nullable(DateTime('UTC')),
    on_time_vs_carrier_edd Nullable(UInt8),
    on_time_vs_promise Nullable(UInt8),
    is_stuck UInt8,
    hours_since_last_scan Nullable(Float64)
)
ENGINE = ReplacingMergeTree()
PARTITION BY toYYYYMM(completed_at)
ORDER BY (key_prefix, analysis_id, carrier, awb);
