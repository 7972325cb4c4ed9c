import { afterEach, describe, expect, it } from 'vitest';
import { istToMs } from './ist.ts';
import { SLOW_DELAY_MS } from './scenario.ts';
import { buildSandboxApp, parseFaultsEnv, startSandbox, type RunningSandbox, type SandboxOptions } from './server.ts';
import type { SandboxRenderer } from './types.ts';

const NOW = istToMs(2026, 11, 20, 14, 37, 0);

/** A minimal carrier: enough format to see what the server did around it. */
const testCarrier: SandboxRenderer = {
  slug: 'testcarrier',
  routes: [
    {
      method: 'GET',
      path: '/track/:awb',
      handle(req, params, lookup) {
        const answer = lookup(params.awb ?? '');
        if (answer.kind === 'not_found') return { status: 404, contentType: 'application/json', body: '{"error":"no data"}' };
        if (answer.kind === 'malformed') return { status: 200, contentType: 'application/json', body: '{"steps": [' };
        if (answer.kind !== 'shipment') return { status: 200, contentType: 'text/plain', body: `renderer saw ${answer.kind}` };
        const { shipment } = answer;
        return {
          status: 200,
          contentType: 'application/json',
          body: JSON.stringify({ awb: shipment.awb, scenario: shipment.scenario, last: shipment.steps.at(-1), q: req.query }),
        };
      },
    },
    {
      method: 'POST',
      path: '/echo',
      handle: (req) => ({ status: 200, contentType: 'text/plain', body: `${req.path} ${req.headers['content-type']} ${req.body}` }),
    },
  ],
};
const otherCarrier: SandboxRenderer = { ...testCarrier, slug: 'othercarrier' };

const running: RunningSandbox[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});

async function sandbox(options: SandboxOptions = {}): Promise<RunningSandbox> {
  const started = await startSandbox({ renderers: [testCarrier, otherCarrier], clock: () => NOW, ...options });
  running.push(started);
  return started;
}

async function get(url: string): Promise<{ status: number; body: string; ms: number }> {
  const started = Date.now();
  const res = await fetch(url);
  return { status: res.status, body: await res.text(), ms: Date.now() - started };
}

async function putFaults(base: string, slug: string, faults: unknown): Promise<{ status: number; json: unknown }> {
  const res = await fetch(`${base}/_faults/${slug}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(faults),
  });
  return { status: res.status, json: await res.json() };
}

/** Which of `n` calls failed with 503, as a string of 0/1. */
async function errorPattern(base: string, n: number): Promise<string> {
  let pattern = '';
  for (let i = 0; i < n; i++) pattern += (await get(`${base}/testcarrier/track/1234560102`)).status === 503 ? '1' : '0';
  return pattern;
}

describe('sandbox server', () => {
  it('answers /healthz and serves a carrier under /<slug> from the scenario engine', async () => {
    const { url } = await sandbox();
    expect(await get(`${url}/healthz`)).toMatchObject({ status: 200, body: '{"status":"ok"}' });
    const res = await get(`${url}/testcarrier/track/1234560104?format=json`);
    expect(res.status).toBe(200);
    const body = JSON.parse(res.body) as { awb: string; scenario: number; last: { kind: string; at: number }; q: unknown };
    expect(body).toMatchObject({ awb: '1234560104', scenario: 4, last: { kind: 'delivered', at: NOW - 86_400_000 }, q: { format: 'json' } });
    expect((await get(`${url}/testcarrier/track/1234560100`)).status).toBe(404);
    expect((await get(`${url}/nocarrier/track/1234560102`)).status).toBe(404);
  });

  it('hands request bodies to the route as the text that was sent', async () => {
    const { url } = await sandbox();
    for (const [type, body] of [['application/json', '{"strcnno":"X1"}'], ['application/x-www-form-urlencoded', 'docket_id=1234']]) {
      const res = await fetch(`${url}/testcarrier/echo/`, { method: 'POST', headers: { 'content-type': type! }, body });
      expect(await res.text()).toBe(`/echo/ ${type} ${body}`);
    }
  });

  it('answers 503 on every call for a down AWB (17), and only for it', async () => {
    const { url } = await sandbox();
    for (let i = 0; i < 3; i++) expect((await get(`${url}/testcarrier/track/1234560117`)).status).toBe(503);
    expect((await get(`${url}/testcarrier/track/1234560102`)).status).toBe(200);
  });

  it('answers a slow AWB (18) after its delay, with an in-transit shipment the renderer sees as plain', async () => {
    const { url } = await sandbox();
    const res = await get(`${url}/testcarrier/track/1234560118`);
    expect(res.status).toBe(200);
    expect(res.ms).toBeGreaterThanOrEqual(SLOW_DELAY_MS - 50);
    expect(JSON.parse(res.body)).toMatchObject({ scenario: 18, last: { kind: 'hub_in' } });
  });

  it('lets the route write the malformed body (19)', async () => {
    const { url } = await sandbox();
    expect(await get(`${url}/testcarrier/track/1234560119`)).toMatchObject({ status: 200, body: '{"steps": [' });
  });

  it('starts with faults from the options and changes them at run time through /_faults', async () => {
    const { url } = await sandbox({ faults: { testcarrier: { outage: true } } });
    expect((await get(`${url}/testcarrier/track/1234560102`)).status).toBe(503);
    expect((await get(`${url}/othercarrier/track/1234560102`)).status).toBe(200);
    expect(await (await fetch(`${url}/_faults`)).json()).toEqual({
      testcarrier: { latencyMs: 0, errorRate: 0, outage: true },
      othercarrier: { latencyMs: 0, errorRate: 0, outage: false },
    });

    expect(await putFaults(url, 'testcarrier', {})).toEqual({ status: 200, json: { latencyMs: 0, errorRate: 0, outage: false } });
    expect((await get(`${url}/testcarrier/track/1234560102`)).status).toBe(200);
    expect((await putFaults(url, 'othercarrier', { outage: true })).status).toBe(200);
    expect((await get(`${url}/othercarrier/track/1234560102`)).status).toBe(503);
  });

  it('rejects unknown carriers and invalid faults', async () => {
    const { url } = await sandbox();
    expect((await putFaults(url, 'nocarrier', { outage: true })).status).toBe(404);
    expect((await putFaults(url, 'testcarrier', { errorRate: 1.5 })).status).toBe(400);
    expect((await putFaults(url, 'testcarrier', { latencyMs: -1 })).status).toBe(400);
    expect((await putFaults(url, 'testcarrier', { outage: 'yes' })).status).toBe(400);
    expect((await putFaults(url, 'testcarrier', { speed: 3 })).status).toBe(400);
    const res = await fetch(`${url}/_faults/testcarrier`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{oops' });
    expect(res.status).toBe(400);
    expect(() => buildSandboxApp({ renderers: [testCarrier], faults: { nocarrier: { outage: true } } })).toThrow(/nocarrier/);
  });

  it('adds the configured latency to every call', async () => {
    const { url } = await sandbox();
    expect((await get(`${url}/testcarrier/track/1234560102`)).ms).toBeLessThan(250);
    await putFaults(url, 'testcarrier', { latencyMs: 300 });
    const slow = await get(`${url}/testcarrier/track/1234560102`);
    expect(slow.status).toBe(200);
    expect(slow.ms).toBeGreaterThanOrEqual(290);
    expect((await get(`${url}/othercarrier/track/1234560102`)).ms).toBeLessThan(250);
  });

  it('fails the configured share of calls, in a sequence fixed by the seed', async () => {
    const a = await sandbox({ seed: 7, faults: { testcarrier: { errorRate: 0.3 } } });
    const first = await errorPattern(a.url, 120);
    const failures = [...first].filter((c) => c === '1').length;
    expect(failures).toBeGreaterThan(18);
    expect(failures).toBeLessThan(56);

    // A PUT restarts the carrier's sequence; another server with the same seed repeats it.
    await putFaults(a.url, 'testcarrier', { errorRate: 0.3 });
    expect(await errorPattern(a.url, 120)).toBe(first);
    const b = await sandbox({ seed: 7, faults: { testcarrier: { errorRate: 0.3 } } });
    expect(await errorPattern(b.url, 120)).toBe(first);
    const c = await sandbox({ seed: 8, faults: { testcarrier: { errorRate: 0.3 } } });
    expect(await errorPattern(c.url, 120)).not.toBe(first);

    await putFaults(a.url, 'testcarrier', { errorRate: 1 });
    expect(await errorPattern(a.url, 20)).toBe('1'.repeat(20));
    await putFaults(a.url, 'testcarrier', { errorRate: 0 });
    expect(await errorPattern(a.url, 20)).toBe('0'.repeat(20));
  });

  it('serves all 11 carriers by default', async () => {
    const app = buildSandboxApp();
    const res = await app.inject({ method: 'GET', url: '/_faults' });
    expect(Object.keys(res.json() as object).sort()).toEqual([
      'bluedart', 'delhivery', 'dtdc', 'ekart', 'indiapost', 'professionalcouriers', 'shadowfax', 'shiprocket',
      'shreemaruti', 'speedpost', 'xpressbees',
    ]);
    await app.close();
  });
});

describe('parseFaultsEnv', () => {
  it('reads SANDBOX_FAULTS and rejects what it cannot use', () => {
    expect(parseFaultsEnv(undefined)).toEqual({});
    expect(parseFaultsEnv(' ')).toEqual({});
    expect(parseFaultsEnv('{"dtdc":{"latencyMs":200,"errorRate":0.1},"ekart":{"outage":true}}')).toEqual({
      dtdc: { latencyMs: 200, errorRate: 0.1 },
      ekart: { outage: true },
    });
    expect(() => parseFaultsEnv('{dtdc')).toThrow(/not JSON/);
    expect(() => parseFaultsEnv('{"dtdc":{"errorRate":2}}')).toThrow(/invalid/);
  });
});
