/**
 * Customer notices end to end on the embedded default (npm run bench -- notify): N watched
 * shipments, each with a customer contact (sealed in the vault), get one poll each that moves them
 * out for delivery; push's change detection (ChangeDetector, as the embedded normalizer runs it)
 * turns each into an event, the in-process event log hands it to the notices, whose loop sends it
 * through the WhatsApp Cloud API to the sandbox providers, which run in a process of their own
 * (bench/servers/messaging-sandbox.ts) as Meta's would.
 *
 * Figures: notices per second from the first poll handled to the last notice accepted by the
 * provider, under a burst of N changes (BENCH_NOTIFY_SHIPMENTS, default 10,000); p50/p99 from a
 * shipment's change (its poll handed to detection) to its notice's acceptance; and duplicates (a
 * notice's reference accepted twice), which must be 0. The load average is printed first.
 */
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pLimit from 'p-limit';
import type { KeyRecord } from '../lib/access/index.ts';
import { standingOf } from '../lib/access/standing.ts';
import { BuyerNotices, ContactVault, NoticeStore, WhatsAppChannel } from '../lib/buyer-notices/index.ts';
import { DEFAULT_CONFIG_DIR, loadNoticeTemplates } from '../lib/config/index.ts';
import { EmbeddedKv } from '../lib/kv/index.ts';
import { normalizePoll } from '../lib/normalize/index.ts';
import { loadProduct } from '../lib/product/index.ts';
import { ChangeDetector, InProcessEventLog, WatchStore } from '../lib/push/index.ts';
import { EVERY_KEY_ACTIVE } from '../lib/push/testutil/receiver.ts';
import { requireAwb, type CarrierPoll } from '../lib/schemas/index.ts';
import { makePoll, scan } from '../lib/testutil/polls.ts';
import { progressLog } from './harness.ts';
import type { BenchResult } from './report.ts';
import type { MessagingChildMessage } from './servers/messaging-sandbox.ts';
import { percentile, round } from './stats.ts';

export const TARGET_NOTICES_PER_SECOND = 500;
const SHIPMENTS = Number(process.env.BENCH_NOTIFY_SHIPMENTS ?? 10_000);
const PREFIX = 'trk_test_B3nchNt';

const KEY: KeyRecord = {
  prefix: PREFIX, hash: 'b'.repeat(64), mode: 'test', email: 'bench@example.com', plan: 'business', status: 'active',
  period_start: '2026-11-01T00:00:00.000Z', period_end: '2099-01-01T00:00:00.000Z', lookups_limit: 12000, daily_quota: 2400, burst_per_second: 20,
  created_at: '2026-11-01T00:00:00.000Z', renewed_at: null, notices_sent: {},
};

const booked = (i: number) => scan({ occurred_at: '2026-11-27T09:00:00', raw_status: 'Manifested', raw_code: 'UD', remarks: 'Consignment Manifested', location: `Hub ${i % 7}` });
const picked = scan({ occurred_at: '2026-11-27T15:00:00', raw_status: 'In Transit', raw_code: 'UD', remarks: 'Shipment picked up', location: 'Delhi Hub' });
const ofd = scan({ occurred_at: '2026-11-28T08:10:00', raw_status: 'Dispatched', raw_code: 'UD', remarks: 'Out for delivery', location: 'Bengaluru Branch' });
const awbOf = (i: number) => `${String(7_000_000_000 + i)}000`;
/** Distinct Indian mobile numbers; none ends in 0000 (the sandbox's "not on WhatsApp"). */
const phoneOf = (i: number) => `+919${String(i).padStart(5, '0')}1234`;

interface Providers {
  ready: Extract<MessagingChildMessage, { type: 'ready' }>;
  /** reference → acceptance times (more than one: a duplicate). */
  accepted: Map<string, number[]>;
  count: number;
  stop(): void;
}

async function startProviders(): Promise<Providers> {
  const child = fork(fileURLToPath(new URL('./servers/messaging-sandbox.ts', import.meta.url)), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const accepted = new Map<string, number[]>();
  const providers = { accepted, count: 0, stop: () => { child.send({ type: 'stop' }); } } as Providers;
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.on('message', (m: MessagingChildMessage) => {
      if (m.type === 'ready') resolve({ ...providers, ready: m, get count() { return providers.count; } } as Providers);
      else for (const [reference, at] of m.items) { accepted.set(reference, [...(accepted.get(reference) ?? []), at]); providers.count++; }
    });
  });
}

export async function benchNotify(): Promise<BenchResult[]> {
  const [one, five, fifteen] = loadavg();
  const progress = progressLog('notify');
  const results: BenchResult[] = [{ name: 'load average (1, 5, 15 min): 1 min shown', value: round(one!, 2), unit: `(${five!.toFixed(2)}, ${fifteen!.toFixed(2)})`, target: null, pass: null }];
  const dir = await mkdtemp(join(tmpdir(), 'bench-notify-'));
  const providers = await startProviders();
  const kv = new EmbeddedKv(dir);
  const product = loadProduct();
  const templates = loadNoticeTemplates(DEFAULT_CONFIG_DIR);
  try {
    const vault = new ContactVault(kv, randomBytes(32));
    const store = new NoticeStore(kv);
    await store.setSettings(PREFIX, { events: ['out_for_delivery'], quiet_hours: null });
    const notices = new BuyerNotices({
      store, vault, templates, keyOf: async () => KEY, standingOf: (k, ms) => standingOf(k, new Date(ms)),
      channelsFor: () => ({ whatsapp: new WhatsAppChannel({ apiUrl: providers.ready.url, ...providers.ready.whatsapp, templates }) }),
      allowanceOf: () => SHIPMENTS, shopNameOf: async () => 'Bench Store', carrierNameOf: () => 'Delhivery',
      pageLinkOf: async (_p, _m, carrier, awb) => `https://track.example.in/t/${carrier}${awb}`, unsubscribeUrlOf: () => 'https://track.example.in/u',
    });
    const detector = new ChangeDetector({ kv, standing: EVERY_KEY_ACTIVE, events: new InProcessEventLog((events) => notices.enqueue(events)), lanes: { get: async () => null }, clock: Date.now });
    const watches = new WatchStore(kv);
    progress(`watching ${SHIPMENTS} shipments with a customer contact each`);
    const limit = pLimit(64);
    const pollOf = (i: number, scans: ReturnType<typeof scan>[], at: string): CarrierPoll => makePoll({ awb: awbOf(i), polled_at: at, scans });
    await Promise.all(Array.from({ length: SHIPMENTS }, (_, i) => limit(async () => {
      const first = pollOf(i, [booked(i), picked], '2026-11-27T16:00:00.000Z');
      const result = normalizePoll(first, product.rules);
      await watches.create({
        keyPrefix: PREFIX, mode: 'test', carrier: 'delhivery', awb: requireAwb(awbOf(i)), record: null, polledMs: 0, terminal: false, nowMs: Date.now(),
      });
      await detector.handle(first, 'test', result);
      await vault.put(PREFIX, 'delhivery', awbOf(i), { channels: ['whatsapp'], language: i % 2 ? 'hi' : 'en', contact: { phone: phoneOf(i), email: null } }, Date.now());
    })));
    // The picked-up notices of the watches' first polls are off in the settings: only the burst counts.
    notices.start();
    progress(`a burst of ${SHIPMENTS} changes (out for delivery)`);
    const changedAt = new Map<string, number>();
    const started = Date.now();
    await Promise.all(Array.from({ length: SHIPMENTS }, (_, i) => limit(async () => {
      const poll = pollOf(i, [booked(i), picked, ofd], '2026-11-28T03:00:00.000Z');
      const at = Date.now();
      await detector.handle(poll, 'test', normalizePoll(poll, product.rules));
      changedAt.set(awbOf(i), at);
    })));
    const deadline = Date.now() + 300_000;
    while (providers.count < SHIPMENTS && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const elapsed = (Date.now() - started) / 1000;
    await notices.stop();
    // Latency: each notice's acceptance against its shipment's change (the notice names its shipment's doc).
    const latencies: number[] = [];
    let duplicates = 0;
    for (const [reference, times] of providers.accepted) {
      if (times.length > 1) duplicates += times.length - 1;
      const doc = await store.get(PREFIX, reference.split('|')[1] ?? '');
      const changed = doc ? changedAt.get(doc.awb) : undefined;
      if (changed !== undefined) latencies.push(times[0]! - changed);
    }
    const rate = providers.count / elapsed;
    results.push(
      { name: `embedded: notices accepted by the provider (${providers.count} of ${SHIPMENTS}, in ${elapsed.toFixed(1)} s)`, value: round(rate, 0), unit: 'notices/s', target: `>= ${TARGET_NOTICES_PER_SECOND}`, pass: rate >= TARGET_NOTICES_PER_SECOND && providers.count >= SHIPMENTS },
      { name: 'embedded: change → provider accepted, p50', value: round(percentile(latencies, 50), 0), unit: 'ms', target: null, pass: null },
      { name: 'embedded: change → provider accepted, p99 (under the burst)', value: round(percentile(latencies, 99), 0), unit: 'ms', target: null, pass: null },
      { name: 'embedded: duplicates (a notice accepted twice)', value: duplicates, unit: '', target: '0', pass: duplicates === 0 },
    );
    return results;
  } finally {
    providers.stop();
    await kv.close();
    await rm(dir, { recursive: true, force: true });
  }
}
