-- Backfill: one lane_closures row per shipment already closed when 0006 arrived, computed as
-- laneClosureOf (lib/lanes/closure.ts) computes it for new ones: the latest shipments row per
-- carrier + AWB + mode, and of its events (latest mapping per event_id) the earliest delivered /
-- rto_delivered / cancelled scan (closed_at) and the reason of each failed attempt in time order.
-- Reads the whole history once. Re-running it (a failed first run) adds rows of the same version,
-- which collapse; readers take argMax per shipment anyway.
-- Both joined subqueries are named: ClickHouse after 2018 refuses an unnamed one (setting
-- joined_subquery_requires_alias, on by default). The text first shipped without the two aliases;
-- lib/clickhouse/migrate.ts accepts that text's checksum for installations that applied it.
INSERT INTO lane_closures
SELECT
    if(s_mode = 'test', concat('test:', s_lane), s_lane) AS lane,
    carrier,
    splitByChar(':', s_lane)[2] AS origin_prefix,
    splitByChar(':', s_lane)[3] AS destination_prefix,
    s_mode AS mode,
    awb,
    multiIf(s_stage = 'delivered', 'delivered', s_stage = 'rto_delivered', 'rto', 'cancelled') AS outcome,
    e_closed_at AS closed_at,
    if(s_stage = 'delivered', s_transit, NULL) AS transit_days,
    if(s_stage = 'delivered' AND isNotNull(s_edd), toUInt8(e_closed_at <= assumeNotNull(s_edd)), NULL) AS on_time,
    if(s_stage = 'delivered', toUInt8(s_attempts <= 1), NULL) AS first_attempt,
    e_reasons AS ndr_reasons,
    s_version AS version,
    now() AS ingested_at
FROM
(
    SELECT carrier, awb, mode AS s_mode,
        tupleElement(latest, 1) AS s_stage, assumeNotNull(tupleElement(latest, 2)) AS s_lane,
        tupleElement(latest, 3) AS s_edd, tupleElement(latest, 4) AS s_attempts,
        tupleElement(latest, 5) AS s_transit, tupleElement(latest, 6) AS s_version,
        isNotNull(tupleElement(latest, 2)) AS s_has_lane
    FROM
    (
        SELECT carrier, awb, mode,
            argMax(tuple(stage, lane, estimated_delivery_at, attempts, transit_days, version), tuple(version, ingest_version)) AS latest
        FROM shipments
        GROUP BY carrier, awb, mode
    )
    WHERE s_has_lane AND s_stage IN ('delivered', 'rto_delivered', 'cancelled')
) AS closed_shipments
ANY INNER JOIN
(
    SELECT carrier, awb,
        minIf(ev_at, ev_code IN ('delivered', 'rto_delivered') OR ev_status = 'cancelled') AS e_closed_at,
        countIf(ev_code IN ('delivered', 'rto_delivered') OR ev_status = 'cancelled') AS e_closing,
        arrayMap(t -> tupleElement(t, 3), arraySort(groupArrayIf(tuple(ev_at, event_id, ifNull(ev_reason, 'other')), ev_code = 'delivery_attempted'))) AS e_reasons
    FROM
    (
        SELECT carrier, awb, event_id,
            tupleElement(ev, 1) AS ev_at, tupleElement(ev, 2) AS ev_code, tupleElement(ev, 3) AS ev_status, tupleElement(ev, 4) AS ev_reason
        FROM
        (
            SELECT carrier, awb, event_id, argMax(tuple(occurred_at, code, status, reason_code), ingest_version) AS ev
            FROM events
            GROUP BY carrier, awb, event_id
        )
    )
    GROUP BY carrier, awb
    HAVING e_closing > 0
) AS closing_events USING (carrier, awb);
