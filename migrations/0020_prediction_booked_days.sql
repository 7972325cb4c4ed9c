-- The booked stage's buckets are days since the booking × the as-of daypart, and the origin's rest days (lib/prediction/model.ts
-- DAY_BUCKETS; docs/engineers/prediction.md), no longer hours since it. Booked-stage observations
-- written before hold hour buckets under the same numbers: counted with the new ones they would mix
-- two meanings in one cell until the window renews, so they go. Derived rows only (the normalizer
-- wrote them from the polls): the booked cells refill as shipments are delivered, and until a cell
-- has 30 deliveries a lookup reads a wider level, as on a new installation. A mutation: it applies
-- to the parts that exist when it is made, so rows written after it (new buckets) stay.
ALTER TABLE prediction_observations DELETE WHERE stage = 'awaiting_pickup';
