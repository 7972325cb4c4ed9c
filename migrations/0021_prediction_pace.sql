-- In transit en route and in the destination state, the detail slot (the `daypart` column) holds the
-- pace: how many hours the parcel took from pickup to its current place, in three classes
-- (lib/prediction/model.ts detailSlotOf; docs/engineers/prediction.md). Observations of those
-- positions written before hold the as-of daypart under the same numbers: counted with the new ones
-- they would mix two meanings in one cell until the window renews, so they go. Derived rows only (the
-- normalizer wrote them from the polls): they refill as shipments are delivered, and until a detail
-- cell has 30 deliveries a lookup reads the plain cells. Positions are POSITIONS' indexes: 2 en route,
-- 3 the destination state. A mutation: rows written after it stay.
ALTER TABLE prediction_observations DELETE WHERE stage = 'in_transit' AND position IN (2, 3);
