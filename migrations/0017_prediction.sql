-- The delivery model in ClickHouse (contracts.md "Delivery prediction"; docs/engineers/prediction.md).
-- prediction_observations: what the model learns from, one row per observation of a delivered
-- shipment (lib/prediction observeShipment: episode × time-in-stage bucket, survivors only), written
-- once when the normalizer sees the shipment delivered. The level keys are the lookup's (lane, state
-- pair, zone, carrier + service, carrier; '' where a level cannot be named). k: working days of the
-- destination from the as-of day to the delivery day. PARTITION BY month of as_of: a rebuild reads
-- only the window's months. ReplacingMergeTree(version): a shipment written twice collapses on merge.
CREATE TABLE IF NOT EXISTS prediction_observations
(
    mode String,
    carrier String,
    awb String,
    episode UInt8,
    bucket UInt8,
    stage String,
    key_lane String,
    key_state String,
    key_zone String,
    key_service String,
    key_carrier String,
    as_of DateTime('UTC'),
    daypart UInt8,
    k UInt8,
    delivered_at DateTime('UTC'),
    version UInt64
)
ENGINE = ReplacingMergeTree(version)
PARTITION BY toYYYYMM(as_of)
ORDER BY (mode, carrier, awb, episode, bucket);

-- prediction_cells: one row per level key × stage × bucket with 30+ deliveries, per model version
-- (the rebuild's start, epoch ms): counts of k (index 0 = k 0) over the window, and over its part
-- before the calibration window with their scores (lib/prediction/cells.ts) for the calibration.
-- A partition per version: the rebuild drops old versions whole.
CREATE TABLE IF NOT EXISTS prediction_cells
(
    version UInt64,
    key String,
    stage String,
    bucket UInt8,
    n UInt32,
    counts Array(UInt32),
    n_early UInt32,
    counts_early Array(UInt32),
    scores_early Array(UInt16)
)
ENGINE = MergeTree
PARTITION BY version
ORDER BY (key, stage, bucket);

-- prediction_thresholds: the split-conformal thresholds per version, stage and as-of daypart
-- (scores in thousandths of a cell's deliveries; n: calibration deliveries scored).
CREATE TABLE IF NOT EXISTS prediction_thresholds
(
    version UInt64,
    stage String,
    daypart UInt8,
    n UInt32,
    t80 UInt16,
    t90 UInt16
)
ENGINE = MergeTree
PARTITION BY version
ORDER BY (stage, daypart);

-- prediction_models: one row per finished rebuild, written last: readers take the newest version
-- listed here, so a half-written version is never read.
CREATE TABLE IF NOT EXISTS prediction_models
(
    version UInt64,
    model_at DateTime('UTC'),
    window_days UInt16,
    shipments UInt64,
    observations UInt64,
    cells UInt64,
    duration_ms UInt32
)
ENGINE = MergeTree
ORDER BY version;
