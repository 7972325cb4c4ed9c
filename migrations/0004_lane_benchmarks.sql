-- lane_benchmarks: per lane (carrier + 3-digit origin prefix + 3-digit destination prefix), the
-- median transit days of delivered shipments and their count (decisions.md "Lane benchmark").
-- Rewritten by refreshLaneBenchmarks; ReplacingMergeTree(version) keeps the newest row per lane
-- (version = refresh time in epoch ms). Lanes under 30 samples are stored too: the API applies the
-- 30-sample rule.
CREATE TABLE IF NOT EXISTS lane_benchmarks
(
    lane String,
    carrier String,
    origin_prefix String,
    destination_prefix String,
    median_transit_days Float64,
    sample_size UInt32,
    updated_at DateTime('UTC'),
    version UInt64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY lane;
