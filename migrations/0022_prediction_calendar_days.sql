-- Until the parcel is in the destination city (booked; in transit at a place unknown, the origin, en
-- route or in the destination state), `k` now counts calendar days to the delivery's ready day, not the
-- destination's working days (lib/prediction/model.ts countsCalendarDays; docs/engineers/prediction.md):
-- the line haul runs on Sundays too. Observations of those stages and positions written before hold
-- working days under the same column: counted with the new ones they would mix two measures in one
-- cell until the window renews, so they go. Derived rows only (the normalizer wrote them from the
-- polls): they refill as shipments are delivered, and until a cell has 30 deliveries a lookup falls
-- back as it always does. Positions are POSITIONS' indexes: 0 unknown, 1 origin, 2 en route, 3 the
-- destination state. A mutation: rows written after it stay.
ALTER TABLE prediction_observations DELETE WHERE stage = 'awaiting_pickup' OR (stage = 'in_transit' AND position IN (0, 1, 2, 3));
