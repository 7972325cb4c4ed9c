/**
 * A notices sender SIGKILLed mid-burst (issue 43: no notice lost), against the real sandbox
 * providers (HTTP, in this process) and the embedded store in a temp dir. 300 notices are queued;
 * a child process sends them and is killed once a third reached the provider; a second child
 * finishes. Every notice reaches the provider; every notice ends `sent`; a notice reaches it twice
 * only if the kill fell inside its send (its attempt on record, no outcome): the provider cannot
 * say whether it took such a one, so it is sent again with the same reference
 * (biz_opaque_callback_data), and the list says so.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { KeyRecord } from '../access/index.ts';
import { EmbeddedKv } from '../kv/index.ts';
import { startMessagingSandbox, type RunningMessaging } from '../sandbox/messaging.ts';
import { noticeIdOf, NoticeStore, type NoticeDoc } from './store.ts';
import { ContactVault } from './vault.ts';

const CHILD = fileURLToPath(new URL('./testutil/send-child.ts', import.meta.url));
const PREFIX = 'trk_test_Cr4shNt';
const COUNT = 300;
const KEY: KeyRecord = {
  prefix: PREFIX, hash: 'c'.repeat(64), mode: 'test', email: 'crash@example.com', plan: 'business', status: 'active',
  period_start: '2026-11-01T00:00:00.000Z', period_end: '2099-01-01T00:00:00.000Z', lookups_limit: 12000, daily_quota: 2400, burst_per_second: 20,
  created_at: '2026-11-01T00:00:00.000Z', renewed_at: null, notices_sent: {},
};
const vaultKey = randomBytes(32);
let sandbox: RunningMessaging;
let dir: string;
/** reference → how many times the provider accepted it. */
const accepted = new Map<string, number>();

beforeAll(async () => {
  sandbox = await startMessagingSandbox({ onReceived: (m) => { accepted.set(m.reference!, (accepted.get(m.reference!) ?? 0) + 1); } });
  dir = mkdtempSync(join(tmpdir(), 'notices-crash-'));
  const kv = new EmbeddedKv(dir);
  const vault = new ContactVault(kv, vaultKey);
  const store = new NoticeStore(kv);
  await store.setSettings(PREFIX, { events: ['out_for_delivery'], quiet_hours: null });
  const now = Date.now();
  for (let i = 0; i < COUNT; i++) {
    const awb = `${String(8_000_000_000 + i)}000`;
    await vault.put(PREFIX, 'delhivery', awb, { channels: ['whatsapp'], language: 'en', contact: { phone: `+918${String(i).padStart(5, '0')}4321`, email: null } }, now);
    const doc: NoticeDoc = {
      id: noticeIdOf(PREFIX, 'test', 'delhivery', awb, 'out_for_delivery#1'), key_prefix: PREFIX, mode: 'test', carrier: 'delhivery', awb,
      kind: 'out_for_delivery', sequence: 1, day: null, reason: null, language: 'en', status: 'queued', channel: null, template: null,
      failed_channels: [], tries: 0, provider_id: null, detail: null, attempt_started_ms: null, created_ms: now, updated_ms: now,
    };
    await store.add(doc, now);
  }
  await kv.close();
}, 60_000);

afterAll(async () => {
  await sandbox.close();
  rmSync(dir, { recursive: true, force: true });
});

function startChild(): { child: ChildProcess; ready: Promise<void>; exited: Promise<NodeJS.Signals | null> } {
  const child = spawn(process.execPath, [CHILD, dir], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env, NOTICES_KEY: vaultKey.toString('base64'), NOTICES_KEY_RECORD: JSON.stringify(KEY),
      NOTICES_SANDBOX: JSON.stringify({ url: sandbox.url, ...sandbox.whatsapp }),
    },
  });
  let output = '';
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => { output += chunk.toString(); if (output.includes('ready')) resolve(); });
    child.stderr!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    child.once('exit', () => reject(new Error(`the sender exited before it was ready:\n${output}`)));
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
  return { child, ready, exited };
}

const sentCount = () => accepted.size;

it('a sender killed mid-burst loses no notice; one is sent again only if the kill fell inside its send', { timeout: 120_000 }, async () => {
  const first = startChild();
  await first.ready;
  while (sentCount() < COUNT / 3) await new Promise((r) => setTimeout(r, 2));
  first.child.kill('SIGKILL');
  expect(await first.exited).toBe('SIGKILL');
  const atKill = sentCount();
  // A burst cut short proves nothing if it had finished.
  expect(atKill).toBeLessThan(COUNT);

  // What the killed sender left: the attempts on record without an outcome.
  const kv = new EmbeddedKv(dir);
  const docs = (await new NoticeStore(kv).list(PREFIX, {}, 0, COUNT)).items;
  const inDoubt = new Set((await Promise.all(docs.map((d) => new NoticeStore(kv).get(PREFIX, d.id))))
    .filter((d): d is NoticeDoc => d !== null && d.status === 'queued' && d.attempt_started_ms != null).map((d) => `${PREFIX}|${d.id}`));
  await kv.close();

  const second = startChild();
  await second.ready;
  const deadline = Date.now() + 60_000;
  while (sentCount() < COUNT && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  // A lease and more, for anything that would be sent again.
  await new Promise((r) => setTimeout(r, 1_500));
  second.child.kill('SIGKILL');
  await second.exited;

  expect(sentCount()).toBe(COUNT);
  const twice = [...accepted].filter(([, n]) => n > 1).map(([reference]) => reference);
  expect(twice.every((reference) => inDoubt.has(reference)), `sent twice without an attempt cut short: ${twice.join(', ')}`).toBe(true);
  expect([...accepted.values()].every((n) => n <= 2)).toBe(true);
  const after = new EmbeddedKv(dir);
  const final = (await new NoticeStore(after).list(PREFIX, {}, 0, COUNT)).items;
  await after.close();
  expect(final).toHaveLength(COUNT);
  expect(final.every((n) => n.status === 'sent' && n.channel === 'whatsapp')).toBe(true);
  for (const n of final.filter((x) => twice.includes(`${PREFIX}|${x.id}`))) expect(n.detail).toMatch(/cut short/);
});
