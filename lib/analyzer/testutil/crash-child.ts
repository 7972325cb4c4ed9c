/**
 * A process that dies in the middle of an analysis, for the analyzer's crash tests
 * (crash.suite.ts): opens the state store named in argv[2] (JSON), and
 * - `accepted`: does Analyzer.accept's first two steps (reserve on the schedule, store the analysis
 *   and count it) and is killed before the third (scheduling it due now);
 * - `mid-run`: accepts an analysis, runs it with slow lookups, and is killed once it is part done
 *   (its lease held by this process).
 * It prints `ready <id>` and kills itself with SIGKILL: no close, no flush, no lease given back.
 */
import { Redis } from 'ioredis';
import { LaneBook } from '../../lanes/index.ts';
import { EmbeddedKv, RedisKv, type Kv } from '../../kv/index.ts';
import { InProcessEventLog } from '../../push/index.ts';
import { Analyzer } from '../analyzer.ts';
import { missingShipment } from '../shipment.ts';
import { newAnalysisId } from '../store.ts';
import { CRASH_PLANS, crashRecord, crashShipments, type CrashChildOptions } from './crash-setup.ts';

const options = JSON.parse(process.argv[2] ?? '{}') as CrashChildOptions;
const kv: Kv = options.store.kind === 'embedded' ? new EmbeddedKv(options.store.dir) : new RedisKv(new Redis(options.store.url), options.store.namespace);
const analyzer = new Analyzer({
  kv, tracking: { lookup: async () => ({ kind: 'not_found' }), readCache: async () => null }, network: new LaneBook(), plans: CRASH_PLANS,
  events: new InProcessEventLog(async () => {}), clock: Date.now, runner: { idleMs: 20 },
  // Slow enough that the kill comes while chunks remain.
  lookup: async (s) => { await new Promise((resolve) => setTimeout(resolve, 10)); return missingShipment(s, 'delhivery', 'not_found', null); },
});
const record = crashRecord(options.prefix);
const shipments = crashShipments();

function die(id: string): void {
  process.stdout.write(`ready ${id}\n`, () => process.kill(process.pid, 'SIGKILL'));
}

if (options.phase === 'accepted') {
  const id = newAnalysisId();
  await analyzer.runner.reserve(record.prefix, id);
  const stored = await analyzer.store.accept({
    id, prefix: record.prefix, mode: record.mode, name: 'crash', periodStart: record.period_start, limit: 12_000, shipments, rejected: [], rejectedCount: 0, nowMs: Date.now(),
  });
  if (!stored.ok) throw new Error('refused');
  die(id);
} else {
  const accepted = await analyzer.accept(record, 'crash', shipments, [], 0);
  if (!accepted.ok) throw new Error('refused');
  analyzer.start();
  for (;;) {
    const doc = await analyzer.store.get(record.prefix, accepted.doc.id);
    if (doc && doc.done >= 200) break;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  die(accepted.doc.id);
}
