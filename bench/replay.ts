/**
 * npm run bench -- replay: replay over polls stored in ClickHouse (issue 16).
 *
 * BENCH_REPLAY_POLLS (default 1,000,000) polls are generated inside ClickHouse by INSERT ... SELECT
 * from numbers(): 100,000 shipments over the 11 carriers' ten-scan journeys, each polled 10 times
 * (1, 2, ... 10 scans). Then, in a fresh database, measured one after another:
 *   1. --apply with today's rules while events/shipments are empty: the normalizer's work, redone
 *      from carrier_polls (it also seeds what the next steps compare with);
 *   2. --diff with the rules unchanged (nothing to write);
 *   3. --diff with one DTDC rule changed (out for delivery → in_transit/received);
 *   4. --apply of that change (every row of the window rewritten under the new mapping_version),
 *      then the merge that drops the replaced rows;
 *   5. the record stream of --from-clickhouse (polled_at order, external sort) → tracking records.
 * Each rate is polls of the window per second of wall time. The database is dropped afterwards.
 */
import { randomBytes } from 'node:crypto';
import type { MappingConfig } from '../lib/config/index.ts';
import { createClickHouseClient, migrate, resolveTarget, type ClickHouseClient } from '../lib/clickhouse/index.ts';
import { streamPollsByTime } from '../lib/clickhouse/poll-reader.ts';
import { sqlIdentifier, sqlString } from '../lib/clickhouse/sql.ts';
import { compileRuleSet } from '../lib/normalize/index.ts';
import { loadProduct } from '../lib/product/index.ts';
import { applyClickHouse, diffClickHouse } from '../lib/replay/clickhouse-run.ts';
import { replayPoll } from '../lib/replay/replay-line.ts';
import { JOURNEYS, journeyPoll } from '../lib/testutil/polls.ts';
import type { BenchResult } from './report.ts';
import { progressLog } from './harness.ts';
import { round } from './stats.ts';
import { urlOf } from '../test/services/ports.ts';

const CLICKHOUSE_URL = process.env.CLICKHOUSE_URL ?? urlOf('clickhouse');
const POLLS = Number(process.env.BENCH_REPLAY_POLLS ?? 1_000_000);
const POLLS_PER_SHIPMENT = 10;
const START = Date.UTC(2026, 9, 1, 4, 30);

const progress = progressLog('replay');

/** carrier_polls rows made by ClickHouse itself: the n-th poll of a shipment lists its first n scans. */
export async function generatePolls(client: ClickHouseClient, mappingVersion: string): Promise<void> {
  const carriers = Object.keys(JOURNEYS);
  // Per carrier, its journey's scans as JSON texts, oldest first (journeyPoll with an odd index).
  const scans = carriers.map((c) => journeyPoll(c, 1, START).scans.map((s) => JSON.stringify(s)));
  const carrierList = `[${carriers.map(sqlString).join(',')}]`;
  const scanLists = `[${scans.map((list) => `[${list.map(sqlString).join(',')}]`).join(',')}]`;
  const startSeconds = Math.floor(START / 1000);
  await client.command({
    query: `INSERT INTO carrier_polls (poll_id, carrier, awb, polled_at, polled_at_ms, source, outcome, mode,
        origin_office, origin_city, origin_state, origin_pincode, destination_office, destination_city, destination_state, destination_pincode,
        service_type, weight_grams, booked_at, estimated_delivery_at, scans_json, scan_count, mapping_version, error, normalize_error, ingested_at, ingest_version)
      SELECT toString(generateUUIDv4()), ${carrierList}[c], concat(toString(100000000000 + s), '04'),
        toDateTime(${startSeconds} + (k * 7 + 2) * 3600 + s % 3600, 'UTC'), toUInt16(s % 1000), 'poller', 'ok', if(s % 4 = 0, 'test', 'live'),
        NULL, 'New Delhi', 'Delhi', '110001', NULL, 'Bengaluru', 'Karnataka', '560034',
        NULL, NULL, NULL, NULL, concat('[', arrayStringConcat(arraySlice(${scanLists}[c], 1, k + 1), ','), ']'), toUInt32(k + 1),
        ${sqlString(mappingVersion)}, NULL, NULL, now(), toUInt64(1)
      FROM (SELECT intDiv(number, ${POLLS_PER_SHIPMENT}) AS s, number % ${POLLS_PER_SHIPMENT} AS k, (intDiv(number, ${POLLS_PER_SHIPMENT}) % ${carriers.length}) + 1 AS c FROM numbers(${POLLS}))`,
  });
}

/** Today's rules with DTDC's out-for-delivery scan (raw code OUTDLV) mapped to in_transit/received. */
function changedMappings(mappings: MappingConfig): MappingConfig {
  const copy = structuredClone(mappings);
  const rule = copy.carriers.dtdc!.rules.find((r) => r.when.raw_code?.includes('OUTDLV'));
  if (!rule) throw new Error('no DTDC OUTDLV rule to change');
  rule.status = 'in_transit';
  rule.code = 'received';
  return copy;
}

async function timed<T>(what: string, run: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await run();
  const ms = performance.now() - started;
  progress(`${what}: ${round(ms / 1000, 1)} s, ${round(POLLS / (ms / 1000))} polls/s`);
  return { value, ms };
}

export async function benchReplay(): Promise<BenchResult[]> {
  const target = resolveTarget(CLICKHOUSE_URL, `tracking_bench_replay_${randomBytes(4).toString('hex')}`);
  await migrate(target);
  const client = createClickHouseClient(target, { request_timeout: 600_000 });
  const product = loadProduct();
  const today = product.rules;
  const changed = compileRuleSet(changedMappings(product.config.mappings));
  const window = { since: START - 86_400_000 };
  const rate = (ms: number) => round(POLLS / (ms / 1000));
  try {
    const generated = await timed(`generated ${POLLS} polls in ClickHouse`, () => generatePolls(client, today.mappingVersion));
    const seed = await timed('apply, today\'s rules, events/shipments empty', () => applyClickHouse(client, { window, rules: today }));
    const same = await timed('diff, rules unchanged', () => diffClickHouse(client, { window, rules: today }));
    if (same.value.report.changed !== 0) throw new Error('a diff with unchanged rules found changes');
    const diff = await timed('diff, one DTDC rule changed', () => diffClickHouse(client, { window, rules: changed }));
    progress(`  ${diff.value.report.changed} events change; rows to write: ${JSON.stringify(diff.value.toWrite)}`);
    const apply = await timed('apply, one DTDC rule changed', () => applyClickHouse(client, { window, rules: changed }));
    const collapseMs = apply.value.collapse?.durationMs ?? 0;
    const [check] = await (await client.query({ query: 'SELECT count() AS rows, uniqExact(event_id) AS ids, countIf(mapping_version != ' + sqlString(changed.mappingVersion) + ') AS old FROM events', format: 'JSONEachRow' })).json<{ rows: string; ids: string; old: string }>();
    progress(`  after apply: ${check!.rows} event rows, ${check!.ids} event ids, ${check!.old} under the old mapping`);
    const ctx = { rules: changed, resolveCarrier: (n: string) => product.registry.resolve(n) };
    const stream = await timed('records stream (polled_at order)', async () => {
      let n = 0;
      for await (const { poll } of streamPollsByTime(client, window)) if (replayPoll(poll, ctx).kind === 'record') n++;
      return n;
    });
    if (stream.value !== POLLS) throw new Error(`streamed ${stream.value} records of ${POLLS} polls`);
    return [
      { name: `generate ${POLLS} polls (INSERT ... SELECT from numbers(), informative)`, value: rate(generated.ms), unit: 'polls/s', target: null, pass: null },
      { name: 'apply, events/shipments empty (the normalizer\'s work)', value: rate(seed.ms), unit: 'polls/s', target: null, pass: null },
      { name: '  of it merging (OPTIMIZE FINAL)', value: round(seed.value.collapse?.durationMs ?? 0), unit: 'ms', target: null, pass: null },
      { name: '--from-clickhouse --diff, rules unchanged', value: rate(same.ms), unit: 'polls/s', target: null, pass: null },
      { name: `--from-clickhouse --diff, one rule changed (${diff.value.report.changed} events)`, value: rate(diff.ms), unit: 'polls/s', target: null, pass: null },
      { name: `--apply of it (write pass: ${apply.value.written.carrier_polls + apply.value.written.events + apply.value.written.shipments} rows)`, value: rate(apply.ms), unit: 'polls/s', target: null, pass: null },
      { name: '  of it merging the replaced rows (OPTIMIZE FINAL)', value: round(collapseMs), unit: 'ms', target: null, pass: null },
      { name: '--apply as the command runs it (diff pass + write pass)', value: rate(diff.ms + apply.ms), unit: 'polls/s', target: null, pass: null },
      { name: 'duplicate event rows after apply (plain count - distinct ids)', value: Number(check!.rows) - Number(check!.ids), unit: 'rows', target: '= 0', pass: check!.rows === check!.ids && Number(check!.old) === 0 },
      { name: '--from-clickhouse records (polled_at order, external sort)', value: rate(stream.ms), unit: 'polls/s', target: null, pass: null },
    ];
  } finally {
    await client.command({ query: `DROP DATABASE IF EXISTS ${sqlIdentifier(target.database)}` }).catch((err: unknown) => progress(`could not drop ${target.database}: ${(err as Error).message}`));
    await client.close();
  }
}
