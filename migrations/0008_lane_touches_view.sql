-- Every block inserted into lane_closures adds its lanes to lane_touches (at insert time, in the
-- same request: an insert that fails leaves no touch, a retried one touches again, harmlessly).
CREATE MATERIALIZED VIEW IF NOT EXISTS lane_touches_view TO lane_touches
AS SELECT DISTINCT ingested_at AS touched_at, lane FROM lane_closures;
