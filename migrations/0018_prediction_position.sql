-- The delivery model learns where the parcel is (contracts.md "Delivery prediction", position) and
-- weighs each observation by the time spent in its bucket, as predictions are asked
-- (docs/engineers/prediction.md). prediction_observations: `position` (lib/prediction/position.ts
-- POSITIONS' index, 0 unknown) and `weight` (half hours in the bucket); rows written before read
-- as unknown and weight 1. prediction_thresholds: calibrated per stage × position (daypart 0).
-- 18.16 has no ADD COLUMN IF NOT EXISTS: each table's columns come in one statement, so a rerun
-- after a failure fails only on a table already done (drop that statement to finish).
ALTER TABLE prediction_observations ADD COLUMN position UInt8 DEFAULT 0 AFTER daypart, ADD COLUMN weight UInt32 DEFAULT 1 AFTER k;
ALTER TABLE prediction_thresholds ADD COLUMN position UInt8 DEFAULT 0 AFTER daypart;
