-- lane_stats (contracts.md "Lanes"): per lane and window length, the figures of the lane's
-- shipments closed in the window ending at window_end. A refresh writes new rows only for the
-- lanes it recomputes; ReplacingMergeTree(version) keeps the newest per (window_days, lane) and
-- readers take argMax by version. Rates are NULL when their denominator is 0; ndr_reasons is a
-- Nested (reason code → share of the failed attempts), reasons in code order. Figures are stored
-- from the first delivery; the API and the lookup show them from 30 (sample_size).
CREATE TABLE IF NOT EXISTS lane_stats
(
    lane String,
    carrier String,
    origin_prefix String,
    destination_prefix String,
    mode String,
    window_days UInt16,
    window_end DateTime('UTC'),
    closed UInt32,
    sample_size UInt32,
    p50_transit_days Nullable(Float64),
    p90_transit_days Nullable(Float64),
    on_time_rate Nullable(Float64),
    first_attempt_rate Nullable(Float64),
    rto_rate Nullable(Float64),
    failed_attempts UInt32,
    ndr_reasons Nested(reason String, share Float64),
    updated_at DateTime('UTC'),
    version UInt64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (window_days, lane);
