import { afterEach, describe, expect, it } from 'vitest';
import { WebhookSender } from '../sender.ts';
import { generateSecret, signatureHeaders } from '../signing.ts';
import { startReceiver, type Receiver } from './receiver.ts';
import { LOOPBACK_TARGETS } from './receiver.ts';

const receivers: Receiver[] = [];
const senders: WebhookSender[] = [];
afterEach(async () => {
  await Promise.all(senders.splice(0).map((s) => s.close()));
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

async function receiver(secrets: string[]): Promise<Receiver> {
  const r = await startReceiver({ secrets });
  receivers.push(r);
  return r;
}

function sender(options: ConstructorParameters<typeof WebhookSender>[0] = {}): WebhookSender {
  const s = new WebhookSender({ allowedTargets: LOOPBACK_TARGETS, ...options });
  senders.push(s);
  return s;
}

const now = () => Math.floor(Date.now() / 1000);

function signed(id: string, body: object, secrets: string[], timestampSeconds = now()) {
  const raw = JSON.stringify(body);
  return { raw, headers: signatureHeaders({ id, timestampSeconds, body: raw, secrets }) };
}

async function post(r: Receiver, raw: string, headers: Record<string, string>) {
  return sender().send({ endpointId: 'wh_test', url: r.url, mode: 'test', headers, body: raw });
}

describe('test receiver', () => {
  it('listens on 127.0.0.1 and accepts a good signature (204), recording the delivery', async () => {
    const secret = generateSecret();
    const r = await receiver([secret]);
    expect(r.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/webhooks$/);
    const { raw, headers } = signed('evt_ok', { type: 'tracking.updated', data: { sequence: 1 } }, [secret]);
    expect(await post(r, raw, headers)).toMatchObject({ statusCode: 204, error: null });
    expect(r.deliveries).toHaveLength(1);
    expect(r.deliveries[0]).toMatchObject({
      id: 'evt_ok',
      timestamp: Number(headers['webhook-timestamp']),
      body: { type: 'tracking.updated', data: { sequence: 1 } },
      rawBody: raw,
      verifiedWith: [0],
      answeredStatus: 204,
      attemptOfThisId: 1,
      answered: true,
    });
    expect(r.deliveries[0]!.headers['content-type']).toBe('application/json');
    expect(r.accepted()).toHaveLength(1);
  });

  it('rejects a bad signature with 400: wrong secret, tampered body, stale timestamp, no headers', async () => {
    const secret = generateSecret();
    const r = await receiver([secret]);
    const wrong = signed('evt_wrong', { n: 1 }, [generateSecret()]);
    expect(await post(r, wrong.raw, wrong.headers)).toMatchObject({ statusCode: 400, error: 'HTTP 400' });
    const tampered = signed('evt_tampered', { n: 1 }, [secret]);
    expect(await post(r, tampered.raw.replace('1', '2'), tampered.headers)).toMatchObject({ statusCode: 400 });
    const stale = signed('evt_stale', { n: 1 }, [secret], now() - 600);
    expect(await post(r, stale.raw, stale.headers)).toMatchObject({ statusCode: 400 });
    expect(await post(r, '{}', {})).toMatchObject({ statusCode: 400 });
    expect(r.deliveries.map((d) => [d.id, d.verifiedWith, d.answeredStatus])).toEqual([
      ['evt_wrong', [], 400], ['evt_tampered', [], 400], ['evt_stale', [], 400], ['', [], 400],
    ]);
    expect(r.accepted()).toEqual([]);
  });

  it('reports which of several secrets verified (a rotation), and follows setSecrets', async () => {
    const oldSecret = generateSecret();
    const newSecret = generateSecret();
    const r = await receiver([oldSecret, newSecret]);
    const both = signed('evt_both', { n: 1 }, [oldSecret, newSecret]);
    const onlyNew = signed('evt_new', { n: 2 }, [newSecret]);
    await post(r, both.raw, both.headers);
    await post(r, onlyNew.raw, onlyNew.headers);
    r.setSecrets([oldSecret]);
    await post(r, onlyNew.raw, onlyNew.headers);
    expect(r.deliveries.map((d) => [d.id, d.verifiedWith, d.answeredStatus])).toEqual([
      ['evt_both', [0, 1], 204], ['evt_new', [1], 204], ['evt_new', [], 400],
    ]);
  });

  it('answers as respond() says, per id and attempt, with headers; waitFor sees each arrival', async () => {
    const secret = generateSecret();
    const r = await receiver([secret]);
    r.respond(({ attemptOfThisId }) => (attemptOfThisId < 3
      ? { status: 503, headers: { 'retry-after': '7' } }
      : { status: 200 }));
    const { raw, headers } = signed('evt_retry', { n: 1 }, [secret]);
    const outcomes = [];
    for (let i = 0; i < 3; i++) outcomes.push(await post(r, raw, headers));
    expect(outcomes.map((o) => [o.statusCode, o.retryAfterSeconds])).toEqual([[503, 7], [503, 7], [200, null]]);
    await r.waitFor((x) => x.accepted().length === 1);
    expect(r.deliveries.map((d) => d.attemptOfThisId)).toEqual([1, 2, 3]);
    await expect(r.waitFor((x) => x.deliveries.length > 3, 100)).rejects.toThrow(/not met within 100 ms; 3 deliveries/);
  });

  it('a delayed answer the sender gave up on is recorded but not accepted', async () => {
    const secret = generateSecret();
    const r = await receiver([secret]);
    r.respond(() => ({ status: 200, delayMs: 1_000 }));
    const { raw, headers } = signed('evt_slow', { n: 1 }, [secret]);
    const outcome = await sender({ timeoutMs: 100 }).send({ endpointId: 'wh_slow', url: r.url, mode: 'test', headers, body: raw });
    expect(outcome).toMatchObject({ statusCode: null, error: 'timeout after 100 ms' });
    expect(r.deliveries).toHaveLength(1);
    expect(r.deliveries[0]).toMatchObject({ answeredStatus: 200, answered: false });
    expect(r.accepted()).toEqual([]);
  });
});
