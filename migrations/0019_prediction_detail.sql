-- The delivery model chooses per stage and position whether lookups read the detail keys (position ×
-- as-of daypart) or the plain ones, from its own calibration days (lib/prediction/model.ts
-- chooseDetail; docs/engineers/prediction.md). prediction_thresholds: `detail` 1 where detail keys
-- are read first, 0 where the plain keys predicted better; versions written before read as 1 (what
-- they were built for).
ALTER TABLE prediction_thresholds ADD COLUMN detail UInt8 DEFAULT 1 AFTER position;
