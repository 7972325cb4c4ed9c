/**
 * A notices sender SIGKILLed mid-burst (issue 43: no notice lost, none twice), against the real
 * sandbox providers (HTTP, in this process) and the embedded store in a temp dir. 300 WhatsApp
 * notices are queued; a child process sends them and is killed once a third reached the provider;
 * a second child (on the same webhook port) finishes. The kill cuts some sends short: their
 * attempts are on record without an outcome. Those the provider took are settled by its status
 * webhook (retried until the second child answers it), those it never received are sent after the
 * wait for a status. Every notice reaches the provider exactly once, and ends sent or delivered.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort } from '../testutil/ports.ts';
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
let webhookPort: number;
/** reference → how many times the provider accepted it. */
const accepted = new Map<string, number>();
/** Killed by the provider the moment it accepts this many, before it answers: that send is surely cut short. */
let killAtCount: { count: number; child: ChildProcess } | null = null;

beforeAll(async () => {
  sandbox = await startMessagingSandbox({
    onReceived: (m) => {
      accepted.set(m.reference!, (accepted.get(m.reference!) ?? 0) + 1);
      if (killAtCount && accepted.size >= killAtCount.count) {
        killAtCount.child.kill('SIGKILL');
        killAtCount = null;
      }
    },
  });
  dir = mkdtempSync(join(tmpdir(), 'notices-crash-'));
  // The senders' webhook, as Meta's callback URL: the same address across the kill.
  webhookPort = await freePort();
  sandbox.setWebhooks({ whatsapp: `http://127.0.0.1:${webhookPort}/` });
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
      NOTICES_SANDBOX: JSON.stringify({ url: sandbox.url, ...sandbox.whatsapp }), NOTICES_WEBHOOK_PORT: String(webhookPort),
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

it('a sender killed mid-burst loses no notice and sends none twice', { timeout: 120_000 }, async () => {
  const first = startChild();
  killAtCount = { count: COUNT / 3, child: first.child };
  await first.ready;
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
  // A lease and more: anything that would be sent again has been (the count waited past the 20 s
  // wait for a status, since some sends the kill cut short never reached the provider).
  await new Promise((r) => setTimeout(r, 3_000));
  second.child.kill('SIGKILL');
  await second.exited;

  // The kill did cut sends short (else this proves nothing), and none of them went twice.
  expect(inDoubt.size).toBeGreaterThan(0);
  expect(sentCount()).toBe(COUNT);
  expect([...accepted].filter(([, n]) => n > 1).map(([reference]) => reference)).toEqual([]);
  const after = new EmbeddedKv(dir);
  const final = (await new NoticeStore(after).list(PREFIX, {}, 0, COUNT)).items;
  await after.close();
  expect(final).toHaveLength(COUNT);
  expect(final.filter((n) => n.status !== 'sent' && n.status !== 'delivered')).toEqual([]);
  expect(final.every((n) => n.channel === 'whatsapp')).toBe(true);
  // The ones cut short say how they were settled.
  for (const n of final.filter((x) => inDoubt.has(`${PREFIX}|${x.id}`))) expect(n.detail).toMatch(/cut short/);
});
