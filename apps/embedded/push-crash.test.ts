/**
 * The embedded default under kill -9 (issue 10: "a kill -9 loses no watch, no event and no
 * scheduled retry"): `npm start` (what its script runs) as a real process with no service URLs and
 * a temp DATA_DIR; a trial key subscribes a loopback receiver (lib/push/testutil/receiver.ts,
 * which verifies every request with the `standardwebhooks` package) and watches sandbox scenarios
 * 25 and 26, which the in-process poller moves one stage per poll. The receiver holds every request
 * (never answers) until the process is killed with SIGKILL in the middle of an attempt; started
 * again on the same DATA_DIR, the process delivers every event: sequences 1..n without gaps, the
 * types of the scenario, arrivals in sequence order per shipment, a duplicate always the same
 * webhook-id with the same body.
 *
 * The kill comes after both shipments reached "delivered" (the watch's expiry moves to 3 days
 * after it): the sandbox keeps its progression in the killed process's memory, so a shipment
 * still moving would start its story again after the restart — a sandbox artefact, not push's.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { withoutProjectEnv } from '../../lib/config/index.ts';
import { freePort } from '../../lib/testutil/ports.ts';
import { startReceiver, type ReceivedDelivery, type Receiver } from '../../lib/push/testutil/receiver.ts';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Bounds on waiting, so a hang fails the test instead of stalling the run (not speed checks). */
const START_BOUND_MS = 90_000;
const WAIT_BOUND_MS = 60_000;
const AWB_25 = '1234567890125';
const AWB_26 = '1234567890126';

const children: ChildProcess[] = [];
let dataDir: string | undefined;
let receiver: Receiver | undefined;
/** The latest process's output, for a failure's message. */
let lastOutput = () => '';

afterAll(async () => {
  // Only if the test failed half-way: end what this file started, by its own pid.
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await receiver?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

interface Started {
  child: ChildProcess;
  base: string;
  /** The whole trial key: printed by the first start on a DATA_DIR only (the restart names its prefix). */
  trialKey: string | null;
  exited: Promise<unknown>;
}

/** `npm start` with none of the project's variables but DATA_DIR, PORT, no first-start history and a 1 s poller interval. */
async function start(dir: string): Promise<Started> {
  const env = withoutProjectEnv(process.env);
  for (const name of ['PAYMENT_URL', 'MAIL_FROM', 'NOTICE_CRON']) delete env[name];
  const port = await freePort();
  const child = spawn(process.execPath, ['apps/embedded/main.ts'], {
    cwd: REPO_ROOT,
    // Watched shipments re-polled every second (each poll one stage further); quick retries. No
    // network history: without a delivery model the shipments have no predicted day, so no
    // tracking.eta_changed (whose moves follow the clock, not the crash) joins their status events.
    env: { ...env, DATA_DIR: dir, PORT: String(port), SANDBOX_HISTORY_SHIPMENTS: '0', POLLER_INTERVAL_SECONDS: '1', WEBHOOK_RETRY_SCHEDULE: '1,1,1,1,1,1,1,1', WEBHOOK_ALLOWED_TARGETS: '127.0.0.1/32' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => { output += chunk; });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => { output += chunk; });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  lastOutput = () => output;
  await new Promise<void>((resolve, reject) => {
    const bound = setTimeout(() => { cleanup(); reject(new Error(`no banner within ${START_BOUND_MS} ms:\n${output}`)); }, START_BOUND_MS);
    const look = () => { if (/^\s*curl .+\n/m.test(output)) { cleanup(); resolve(); } };
    const onExit = (code: number | null) => { cleanup(); reject(new Error(`npm start exited (${code}) before its banner:\n${output}`)); };
    const cleanup = () => { clearTimeout(bound); child.stdout!.off('data', look); child.off('exit', onExit); };
    child.stdout!.on('data', look);
    child.once('exit', onExit);
    look();
  });
  const trialKey = /^\s*trial key:\s+(trk_test_[A-Za-z0-9]{32})\b/m.exec(output)?.[1] ?? null;
  const base = /listening on (http:\/\/\S+)/.exec(output)?.[1];
  if (!base || !/^\s*trial key:\s+trk_test_/m.test(output)) throw new Error(`banner without a trial key or address:\n${output}`);
  return { child, base, trialKey, exited };
}

async function call(s: Started, key: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${s.base}${path}`, {
    method, headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

/** What the receiver saw, for a failure's message. */
const seen = () => receiver!.deliveries.map((d) => `${bodyOf(d).data.awb.slice(-2)}#${bodyOf(d).data.sequence}:${d.answered ? d.answeredStatus : 'unanswered'}`).join(' ');

async function until(check: () => Promise<boolean> | boolean, what: string): Promise<void> {
  const deadline = Date.now() + WAIT_BOUND_MS;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${WAIT_BOUND_MS} ms; the receiver saw ${seen()}\n${lastOutput().slice(-3_000)}`);
    // Under the trial plan's burst limit (5 requests/s) with the calls each check makes.
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

interface EventBody {
  type: string;
  data: { awb: string; sequence: number; new_events: { reason_code: string | null }[] };
}
const bodyOf = (d: ReceivedDelivery) => d.body as EventBody;

it('kill -9 mid-delivery, then a restart on the same DATA_DIR: every event delivered, in order, duplicates the same webhook-id and body', { timeout: 300_000 }, async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'push-crash-'));
  receiver = await startReceiver();
  let holding = true;
  // Held requests are never answered (the sender gives up after 15 s and tries again 1 s later).
  receiver.respond(() => (holding ? { status: 204, delayMs: 600_000 } : { status: 204 }));

  const first = await start(dataDir);
  const key = first.trialKey!;
  const endpoint = await call(first, key, 'POST', '/v1/webhooks', { url: receiver.url });
  expect(endpoint.status, JSON.stringify(endpoint.json)).toBe(201);
  receiver.setSecrets([endpoint.json.secret as string]);
  for (const awb of [AWB_25, AWB_26]) {
    const watched = await call(first, key, 'POST', '/v1/trackings', { carrier: 'delhivery', awb });
    expect(watched.status, JSON.stringify(watched.json)).toBe(201);
  }

  // Both shipments delivered (their watches now end 3 days after, not 60 days after they began)...
  const terminal = async (awb: string) => {
    const { json } = await call(first, key, 'GET', `/v1/trackings/delhivery/${awb}`);
    const watch = (json.watch ?? json) as { watched_since: string; expires_at: string };
    return Date.parse(watch.expires_at) - Date.parse(watch.watched_since) < 10 * 86_400_000;
  };
  await until(async () => (await terminal(AWB_25)) && (await terminal(AWB_26)), 'both watched shipments delivered');
  // ...and an attempt in the middle of its request (arrived, not answered, not yet timed out).
  await until(() => receiver!.deliveries.some((d) => !d.answered && Date.now() - d.receivedAt < 12_000), 'an attempt in flight');
  expect(receiver.accepted()).toEqual([]);
  first.child.kill('SIGKILL');
  await first.exited;
  holding = false;

  const second = await start(dataDir);
  const lastSequence = { [AWB_25]: 4, [AWB_26]: 6 };
  const acceptedSequences = (awb: string) => new Set(receiver!.accepted().filter((d) => bodyOf(d).data.awb === awb).map((d) => bodyOf(d).data.sequence));
  await until(() => acceptedSequences(AWB_25).size >= lastSequence[AWB_25] && acceptedSequences(AWB_26).size >= lastSequence[AWB_26], 'every event delivered after the restart');
  // Delivered shipments are not polled again: nothing beyond the last sequence comes (two poller ticks).
  await new Promise((resolve) => setTimeout(resolve, 2_500));
  second.child.kill('SIGTERM');
  await second.exited;

  expect(receiver.deliveries.every((d) => d.verifiedWith.length === 1)).toBe(true);
  for (const [awb, types] of [
    [AWB_25, ['tracking.updated', 'tracking.updated', 'tracking.out_for_delivery', 'tracking.delivered']],
    [AWB_26, ['tracking.updated', 'tracking.updated', 'tracking.out_for_delivery', 'tracking.exception', 'tracking.out_for_delivery', 'tracking.delivered']],
  ] as const) {
    const arrivals = receiver.deliveries.filter((d) => bodyOf(d).data.awb === awb);
    // Order per shipment: every arrival (held ones and retries too) in sequence order.
    const sequences = arrivals.map((d) => bodyOf(d).data.sequence);
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    // Nothing lost, nothing made twice: one accepted webhook-id per sequence 1..n, of the scenario's types.
    const firstAccepted = new Map<number, ReceivedDelivery>();
    for (const d of receiver.accepted()) if (bodyOf(d).data.awb === awb && !firstAccepted.has(bodyOf(d).data.sequence)) firstAccepted.set(bodyOf(d).data.sequence, d);
    expect([...firstAccepted.keys()]).toEqual(types.map((_, i) => i + 1));
    expect([...firstAccepted.values()].map((d) => bodyOf(d).type)).toEqual(types);
    expect(new Set(receiver.accepted().filter((d) => bodyOf(d).data.awb === awb).map((d) => d.id)).size).toBe(types.length);
    // At least once: every attempt of a sequence carries that event's webhook-id and exact body.
    for (const d of arrivals) {
      const delivered = firstAccepted.get(bodyOf(d).data.sequence)!;
      expect(d.id).toBe(delivered.id);
      expect(d.rawBody).toBe(delivered.rawBody);
    }
  }
  // The attempt the kill interrupted was made again after the restart.
  const interrupted = receiver.deliveries.find((d) => !d.answered)!;
  expect(receiver.accepted().some((d) => d.id === interrupted.id)).toBe(true);
  const exception = receiver.accepted().find((d) => bodyOf(d).data.awb === AWB_26 && bodyOf(d).type === 'tracking.exception')!;
  expect(bodyOf(exception).data.new_events.map((e) => e.reason_code)).toContain('customer_unavailable');
});
