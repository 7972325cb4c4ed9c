/**
 * Every query of docs/analysts.md, run as written (its {mode:String} bound to live, {as_of:DateTime} to now) against real
 * ClickHouse on a seeded fixture and checked against figures computed here from the fixture itself.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnalysisDoc, AnalyzedShipment } from '../lib/analyzer/index.ts';
import { writeAnalysisShipments } from '../lib/analyzer/clickhouse-rows.ts';
import { writeClosures } from '../lib/clickhouse/lanes-closures.ts';
import { refreshLaneStats } from '../lib/clickhouse/lanes-window.ts';
import { bindQueryParams } from '../lib/clickhouse/params.ts';
import { defaultAsOf } from '../apps/cli/commands/sql.ts';
import { createTestDatabase, rowsOf, type TestDatabase } from '../lib/clickhouse/testutil/database.ts';
import { seededRandom } from '../lib/random/seeded-random.ts';
import type { LaneClosure, LaneOutcome } from '../lib/lanes/index.ts';
import { DAY_S } from '../lib/time/index.ts';
import { sqlCli } from './support/sql-cli.ts';

const QUERIES = new Map([...readFileSync(new URL('../docs/analysts.md', import.meta.url), 'utf8').matchAll(/```sql (q\d+)\n([\s\S]*?)```/g)].map((m) => [m[1]!, m[2]!]));
const NOW_S = Math.floor(Date.now() / 1000);
const MONTH_START_S = Math.floor(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), 1) / 1000);
const REASONS = ['customer_unavailable', 'address_issue', 'refused', 'premises_closed', 'cod_not_ready', 'other'];
const LANES = [['delhivery', '110', '560'], ['delhivery', '400', '560'], ['delhivery', '110', '700'], ['dtdc', '110', '560'], ['dtdc', '600', '110'], ['ekart', '110', '560']] as const;

function fixture(): LaneClosure[] {
  const random = seededRandom(7);
  const out: LaneClosure[] = [];
  for (const [carrier, o, d] of LANES) {
    for (let i = 0; i < 70; i++) {
      const roll = random();
      const outcome: LaneOutcome = roll < 0.75 ? 'delivered' : roll < 0.9 ? 'rto' : 'cancelled';
      // A third this month (between its start and now), the rest over the last 100 days.
      const closedAtS = i % 3 === 0 ? MONTH_START_S + Math.floor(random() * Math.max(1, NOW_S - MONTH_START_S - 60)) : NOW_S - Math.floor(random() * 100 * DAY_S) - 60;
      const delivered = outcome === 'delivered';
      const failures = outcome === 'cancelled' ? 0 : Math.floor(random() * 3);
      out.push({
        lane: `${carrier}:${o}:${d}`, carrier, awb: `${carrier}${o}${d}${i}`, mode: 'live', outcome, closedAtS,
        transitDays: delivered ? 1 + Math.floor(random() * 900) / 100 : null,
        onTime: delivered && random() < 0.8 ? (random() < 0.7 ? 1 : 0) : null,
        firstAttempt: delivered ? (failures === 0 ? 1 : 0) : null,
        ndrReasons: Array.from({ length: failures }, () => REASONS[Math.floor(random() * REASONS.length)]!),
        version: 1,
      });
    }
  }
  // A sandbox lane that must never appear, and a re-polled shipment (a second row, newer version).
  out.push({ ...out[0]!, lane: 'test:delhivery:110:560', mode: 'test', awb: 'SANDBOX', transitDays: out[0]!.transitDays });
  return out;
}

/** Analysed shipments: three live analyses (one written twice, one 40 days old) and a sandbox one. */
function analyses(): { doc: AnalysisDoc; shipments: AnalyzedShipment[] }[] {
  const random = seededRandom(11);
  const stages = ['delivered', 'delivered', 'delivered', 'rto_delivered', 'rto_in_transit', 'in_transit', 'delivery_attempted', 'awaiting_pickup', 'cancelled', 'exception'] as const;
  const make = (id: string, prefix: string, mode: 'live' | 'test', completedS: number): { doc: AnalysisDoc; shipments: AnalyzedShipment[] } => ({
    doc: { id, key_prefix: prefix, mode, completed_ms: completedS * 1000, created_ms: completedS * 1000 - 60_000 } as AnalysisDoc,
    shipments: Array.from({ length: 120 }, (_, i): AnalyzedShipment => {
      const carrier = ['delhivery', 'bluedart', 'dtdc'][i % 3]!;
      const result = i % 17 === 0 ? 'not_found' : i % 19 === 0 ? 'error' : 'found';
      const stage = stages[Math.floor(random() * stages.length)]!;
      const found = result === 'found';
      const delivered = found && stage === 'delivered';
      return {
        awb: `${id}X${i}`, carrier, order_id: null, payment_mode: i % 2 ? 'cod' : 'prepaid', promised_by_ms: i % 4 ? completedS * 1000 : null,
        result, status: found ? 'in_transit' : null, stage: found ? stage : null, attempts: 1,
        ndr: found && random() < 0.4 ? ['customer_unavailable'] : [], transit_days: delivered ? 2 : null,
        origin_pincode: '110001', destination_pincode: '560001', destination_state: 'Karnataka', lane: `${carrier}:110:560`,
        edd_ms: null, delivered_ms: delivered ? (completedS - Math.floor(random() * 2 * DAY_S)) * 1000 : null,
        is_stuck: false, hours_since_last_scan: null, error: null,
      };
    }),
  });
  return [
    make('an_one', 'trk_live_AAAAAAA', 'live', NOW_S - 3 * DAY_S),
    make('an_two', 'trk_live_BBBBBBB', 'live', NOW_S - DAY_S),
    make('an_old', 'trk_live_AAAAAAA', 'live', NOW_S - 40 * DAY_S),
    make('an_sbx', 'trk_test_CCCCCCC', 'test', NOW_S - DAY_S),
  ];
}

const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); const n = s.length; return n % 2 ? s[(n - 1) / 2]! : (s[n / 2 - 1]! + s[n / 2]!) / 2; };
const p90 = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); const h = 0.9 * (s.length - 1); const lo = Math.floor(h); return s[lo]! + (h - lo) * ((s[lo + 1] ?? s[lo]!) - s[lo]!); };
const num = (v: unknown) => (v === null ? null : Number(v));

describe('docs/analysts.md queries (real ClickHouse)', () => {
  let db: TestDatabase;
  const all = fixture();
  const live = all.filter((c) => c.mode === 'live');
  const since = (days: number) => live.filter((c) => c.closedAtS >= NOW_S - days * DAY_S);
  // The mode and the windows' end bound as `npm run cli -- sql` binds them (18.16 has no query parameters).
  const AS_OF = defaultAsOf(NOW_S * 1000);
  const run = (id: string) => rowsOf<Record<string, unknown>>(db.client, bindQueryParams(QUERIES.get(id)!, { mode: 'live', as_of: AS_OF }));
  const analysed = analyses();

  beforeAll(async () => {
    db = await createTestDatabase();
    await writeClosures(db.client, all);
    // The re-poll: the same shipment again at a newer version, same figures (it must count once).
    await db.client.insert({ table: 'lane_closures', format: 'JSONEachRow', values: [{ ...(await rowsOf<Record<string, unknown>>(db.client, `SELECT * FROM lane_closures WHERE awb = '${live[1]!.awb}'`))[0], version: 2 }] });
    await refreshLaneStats(db.client, { nowMs: NOW_S * 1000 });
    for (const a of analysed) await writeAnalysisShipments(db.client, a.doc, a.shipments);
    // Written again (a restart between completing and writing): FINAL counts it once.
    await writeAnalysisShipments(db.client, analysed[1]!.doc, analysed[1]!.shipments);
  }, 60_000);
  afterAll(async () => { await db?.drop(); });

  it('`npm run cli -- sql <n>` answers each question as the query does: json, csv and the table; --mode test sees only the sandbox', async () => {
    const cli = sqlCli(db.target.database);
    for (const id of QUERIES.keys()) {
      const rows = await run(id);
      expect(JSON.parse(await cli(id, '--format', 'json', '--param', `as_of=${AS_OF}`)), id).toEqual(rows);
      const csv = (await cli(id.slice(1), '--format', 'csv', '--param', `as_of=${AS_OF}`)).trimEnd().split('\n');
      expect(csv.length, id).toBe(rows.length + 1);
    }
    // Without --param as_of the windows end now, as the header says.
    const table = await cli('8');
    expect(table).toMatch(/^8\. Cancellations by carrier \(mode live; as of \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC; /);
    expect(table).toMatch(/carrier\s+closed_shipments\s+cancelled\s+cancelled_share\n-+/);
    // The sandbox lane's one shipment, apart from every live one.
    expect(JSON.parse(await cli('8', '--mode', 'test', '--format', 'json'))).toEqual([expect.objectContaining({ carrier: 'delhivery', closed_shipments: '1' })]);
  });

  it('has eleven queries', () => expect([...QUERIES.keys()]).toEqual(['q1', 'q2', 'q3', 'q4', 'q5', 'q6', 'q7', 'q8', 'q9', 'q10', 'q11']));

  it('q11: customers\' analyses per carrier, last 30 days', async () => {
    const rows = await run('q11');
    const recent = analysed.filter((a) => a.doc.mode === 'live' && a.doc.completed_ms! >= (NOW_S - 30 * DAY_S) * 1000);
    const found = recent.flatMap((a) => a.shipments.map((s) => ({ ...s, key: a.doc.key_prefix }))).filter((s) => s.result === 'found');
    const want = ['delhivery', 'bluedart', 'dtdc'].map((carrier) => {
      const mine = found.filter((s) => s.carrier === carrier);
      const picked = mine.filter((s) => s.stage !== 'awaiting_pickup' && s.stage !== 'cancelled');
      const delivered = mine.filter((s) => s.stage === 'delivered');
      const promised = delivered.filter((s) => s.promised_by_ms !== null);
      return {
        carrier, customers: new Set(mine.map((s) => s.key)).size, shipments: mine.length, delivered: delivered.length,
        rto: picked.filter((s) => s.stage === 'rto_delivered' || s.stage === 'rto_in_transit').length / picked.length,
        ndr: picked.filter((s) => s.ndr.length > 0).length / picked.length,
        promise: promised.filter((s) => s.delivered_ms! <= s.promised_by_ms!).length / promised.length,
      };
    }).sort((a, b) => b.shipments - a.shipments || (a.carrier < b.carrier ? -1 : 1));
    expect(rows.map((r) => [r.carrier, Number(r.customers), Number(r.shipments), Number(r.delivered)])).toEqual(want.map((w) => [w.carrier, w.customers, w.shipments, w.delivered]));
    rows.forEach((r, i) => {
      expect(num(r.rto_rate)).toBeCloseTo(want[i]!.rto, 12);
      expect(num(r.ndr_rate)).toBeCloseTo(want[i]!.ndr, 12);
      expect(num(r.on_time_vs_promise)).toBeCloseTo(want[i]!.promise, 12);
    });
  });

  it('q1: every carrier on a lane with its window figures', async () => {
    const rows = await run('q1');
    const want = ['delhivery', 'dtdc', 'ekart'].map((carrier) => {
      const w = since(90).filter((c) => c.lane === `${carrier}:110:560`);
      const d = w.filter((c) => c.outcome === 'delivered');
      const withEdd = d.filter((c) => c.onTime !== null);
      return { carrier, n: d.length, p50: median(d.map((c) => c.transitDays!)), p90: p90(d.map((c) => c.transitDays!)), onTime: withEdd.filter((c) => c.onTime === 1).length / withEdd.length };
    }).filter((w) => w.n >= 30).sort((a, b) => a.p50 - b.p50);
    expect(rows.map((r) => r.carrier)).toEqual(want.map((w) => w.carrier));
    rows.forEach((r, i) => {
      expect(Number(r.samples)).toBe(want[i]!.n);
      expect(num(r.p50)).toBeCloseTo(want[i]!.p50, 12);
      expect(num(r.p90)).toBeCloseTo(want[i]!.p90, 12);
      expect(num(r.on_time)).toBeCloseTo(want[i]!.onTime, 12);
    });
  });

  it('q2: slowest delhivery lanes this month', async () => {
    const rows = await run('q2');
    const month = live.filter((c) => c.carrier === 'delhivery' && c.outcome === 'delivered' && c.closedAtS >= MONTH_START_S);
    const want = [...new Set(month.map((c) => c.lane))].map((lane) => ({ lane, xs: month.filter((c) => c.lane === lane).map((c) => c.transitDays!) }))
      .filter((l) => l.xs.length >= 10).map((l) => ({ lane: l.lane, n: l.xs.length, p50: median(l.xs) })).sort((a, b) => b.p50 - a.p50);
    expect(rows.map((r) => [r.lane, Number(r.deliveries)])).toEqual(want.map((w) => [w.lane, w.n]));
    rows.forEach((r, i) => expect(num(r.p50_transit_days)).toBeCloseTo(want[i]!.p50, 12));
  });

  it('q3: RTO rate by destination circle', async () => {
    const rows = await run('q3');
    const w = since(90);
    for (const r of rows) {
      const mine = w.filter((c) => c.lane.split(':')[2]!.slice(0, 2) === r.circle);
      const returns = mine.filter((c) => c.outcome === 'rto').length;
      const deliveries = mine.filter((c) => c.outcome === 'delivered').length;
      expect([Number(r.returns), Number(r.deliveries)]).toEqual([returns, deliveries]);
      expect(num(r.rto_rate)).toBeCloseTo(returns / (returns + deliveries), 12);
    }
    expect(rows.map((r) => r.circle).sort()).toEqual(['11', '56', '70']);
  });

  it('q4: NDR reason mix by carrier', async () => {
    const rows = await run('q4');
    const w = since(90);
    let seen = 0;
    for (const carrier of ['delhivery', 'dtdc', 'ekart']) {
      const reasons = w.filter((c) => c.carrier === carrier).flatMap((c) => c.ndrReasons);
      for (const reason of new Set(reasons)) {
        const count = reasons.filter((r) => r === reason).length;
        const row = rows.find((r) => r.carrier === carrier && r.reason === reason)!;
        expect(Number(row.attempts)).toBe(count);
        expect(num(row.share)).toBeCloseTo(count / reasons.length, 12);
        seen++;
      }
    }
    expect(rows).toHaveLength(seen);
  });

  it('q5: on-time trend by week', async () => {
    const rows = await run('q5');
    const monday = (s: number) => { const d = new Date(s * 1000); const day = (d.getUTCDay() + 6) % 7; return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() - day)).toISOString().slice(0, 10); };
    const w = live.filter((c) => c.outcome === 'delivered' && c.onTime !== null && c.closedAtS >= NOW_S - 12 * 7 * DAY_S);
    const weeks = [...new Set(w.map((c) => monday(c.closedAtS)))].sort();
    expect(rows.map((r) => r.week)).toEqual(weeks);
    for (const r of rows) {
      const mine = w.filter((c) => monday(c.closedAtS) === r.week);
      expect(Number(r.with_edd)).toBe(mine.length);
      expect(num(r.on_time_rate)).toBeCloseTo(mine.filter((c) => c.onTime === 1).length / mine.length, 12);
    }
  });

  it('q6: p90 − p50 spread per lane', async () => {
    const rows = await run('q6');
    const w = since(90);
    const want = [...new Set(w.map((c) => c.lane))].map((lane) => w.filter((c) => c.lane === lane && c.outcome === 'delivered').map((c) => c.transitDays!))
      .map((xs, i, arr) => ({ xs, lane: [...new Set(w.map((c) => c.lane))][i]!, arr })).filter((l) => l.xs.length >= 30)
      .map((l) => ({ lane: l.lane, spread: p90(l.xs) - median(l.xs) })).sort((a, b) => b.spread - a.spread || (a.lane < b.lane ? -1 : 1));
    expect(rows.map((r) => r.l)).toEqual(want.map((w) => w.lane));
    rows.forEach((r, i) => expect(num(r.spread_days)).toBeCloseTo(want[i]!.spread, 12));
  });

  it('q7: first-attempt rate by carrier, 30 days', async () => {
    const rows = await run('q7');
    const w = since(30).filter((c) => c.outcome === 'delivered');
    for (const r of rows) {
      const mine = w.filter((c) => c.carrier === r.carrier);
      expect(Number(r.deliveries)).toBe(mine.length);
      expect(num(r.first_attempt_rate)).toBeCloseTo(mine.filter((c) => c.firstAttempt === 1).length / mine.length, 12);
    }
    expect(rows.length).toBe(new Set(w.map((c) => c.carrier)).size);
  });

  it('q8: cancellations by carrier', async () => {
    const rows = await run('q8');
    const w = since(90);
    for (const r of rows) {
      const mine = w.filter((c) => c.carrier === r.carrier);
      expect([Number(r.closed_shipments), Number(r.cancelled)]).toEqual([mine.length, mine.filter((c) => c.outcome === 'cancelled').length]);
    }
    expect(rows).toHaveLength(3);
  });

  it('q9: failed attempts per closed shipment by lane', async () => {
    const rows = await run('q9');
    const w = since(90);
    const want = [...new Set(w.map((c) => c.lane))].map((lane) => { const mine = w.filter((c) => c.lane === lane); return { lane, per: mine.flatMap((c) => c.ndrReasons).length / mine.length }; })
      .sort((a, b) => b.per - a.per || (a.lane < b.lane ? -1 : 1));
    expect(rows.map((r) => r.l)).toEqual(want.map((w) => w.lane));
    rows.forEach((r, i) => expect(num(r.attempts_per_shipment)).toBeCloseTo(want[i]!.per, 12));
  });

  it('q10: daily closures by outcome', async () => {
    const rows = await run('q10');
    const from = Math.floor(NOW_S / DAY_S) * DAY_S - 13 * DAY_S;
    const w = live.filter((c) => c.closedAtS >= from);
    const day = (s: number) => new Date(s * 1000).toISOString().slice(0, 10);
    expect(rows.map((r) => r.day)).toEqual([...new Set(w.map((c) => day(c.closedAtS)))].sort());
    for (const r of rows) {
      const mine = w.filter((c) => day(c.closedAtS) === r.day);
      expect([Number(r.delivered), Number(r.returned), Number(r.cancelled)]).toEqual(['delivered', 'rto', 'cancelled'].map((o) => mine.filter((c) => c.outcome === o).length));
    }
  });
});
