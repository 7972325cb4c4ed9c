-- webhook_deliveries: one row per delivery attempt of a webhook event (contracts.md "Push"), so
-- analysts can measure delivery success per customer (key_prefix) and endpoint. attempt counts from
-- 1 per event and endpoint; status_code is null when no HTTP answer came (refused, timeout, connect
-- error), with the reason in error. ReplacingMergeTree: an attempt row written twice (a writer retry)
-- collapses to one on merge; count with uniqExact(event_id, endpoint_id, attempt) or FINAL for exact
-- figures before a merge.
CREATE TABLE IF NOT EXISTS webhook_deliveries
(
    event_id String,
    endpoint_id String,
    key_prefix String,
    type String,
    carrier String,
    awb String,
    attempt UInt16,
    status_code Nullable(UInt16),
    latency_ms UInt32,
    error Nullable(String),
    attempted_at DateTime('UTC')
)
ENGINE = ReplacingMergeTree()
PARTITION BY toYYYYMM(attempted_at)
ORDER BY (key_prefix, endpoint_id, event_id, attempt);
