-- replay_checkpoints: progress of `npm run replay -- --from-clickhouse --apply`, so an interrupted
-- apply resumes after the last page it finished instead of starting over (lib/replay/README.md).
-- One run per run_id (a hash of the new mapping_version and the window: since, until, carriers);
-- every finished page writes a row and the newest (version, epoch ms) is the run's state.
-- (carrier, awb): the last AWB of the last finished page; state: writing | collapsing | done.
-- started_version: the first ingest_version the run wrote with (its rows are those at or above it).
CREATE TABLE IF NOT EXISTS replay_checkpoints
(
    run_id String,
    mapping_version String,
    window String,
    state String,
    carrier String,
    awb String,
    pages UInt64,
    polls UInt64,
    rows_written UInt64,
    started_version UInt64,
    updated_at DateTime('UTC'),
    version UInt64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY run_id;
