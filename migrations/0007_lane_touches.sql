-- lane_touches: which lanes received closures when (filled by the view of 0008). A refresh reads
-- the touches since its previous run through the sort key, so finding the changed lanes costs what
-- changed, not the window or the history. Day partitions older than a week are dropped by the
-- refresh (18.16 has no TTL).
CREATE TABLE IF NOT EXISTS lane_touches
(
    touched_at DateTime('UTC'),
    lane String
)
ENGINE = MergeTree
PARTITION BY toYYYYMMDD(touched_at)
ORDER BY (touched_at, lane);
