-- lane_refreshes: one row per lane_stats refresh (what it covered and what it cost). The next
-- refresh starts from the newest row of its window length: touches since `refreshed_at` (minus a
-- margin) and closures that left the window since `window_end`.
CREATE TABLE IF NOT EXISTS lane_refreshes
(
    window_days UInt16,
    window_end DateTime('UTC'),
    refreshed_at DateTime('UTC'),
    full UInt8,
    lanes UInt32,
    duration_ms UInt32
)
ENGINE = MergeTree
ORDER BY (window_days, window_end);
