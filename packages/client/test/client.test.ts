/**
 * The client package: its committed types equal a fresh generation from the API's document, the
 * README's examples run against the embedded server, retries honour Retry-After, and delivery
 * signatures are verified as the API signs them.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiHarness, type ApiHarness } from '../../../apps/api/testutil/harness.ts';
import { pngOf } from '../../../lib/branding/testutil/images.ts';
import { retryAfterSeconds, retryingFetch, verifyWebhook } from '../src/index.ts';
import { SCHEMA_FILE, clientTypes } from '../scripts/types.ts';

const README = new URL('../README.md', import.meta.url);
const EXAMPLES_DIR = new URL('./.readme-examples/', import.meta.url);

/** The README's `<!-- example: name -->` code blocks, importing the package from its source. */
async function readmeExamples(): Promise<Map<string, string>> {
  const text = await readFile(README, 'utf8');
  const examples = new Map<string, string>();
  for (const match of text.matchAll(/<!-- example: (\w+) -->\n```ts\n([\s\S]*?)```/g)) {
    examples.set(match[1]!, match[2]!.replaceAll("from '@india-tracking/client'", `from '${fileURLToPath(new URL('../src/index.ts', import.meta.url))}'`));
  }
  return examples;
}

describe('the client package', () => {
  let h: ApiHarness;
  let baseUrl: string;
  let key: string;

  beforeAll(async () => {
    h = await startApiHarness();
    baseUrl = await h.listen();
    key = (await h.createKey({ plan: 'starter', mode: 'test', burst_per_second: 100 })).key;
  });
  afterAll(async () => {
    await rm(EXAMPLES_DIR, { recursive: true, force: true });
    await h?.close();
  });

  it('src/schema.ts is what `npm run client:generate` makes from the current document', async () => {
    await h.app.ready();
    expect(await readFile(SCHEMA_FILE, 'utf8')).toBe(await clientTypes(h.app.apiDocuments().public));
  });

  it('the README examples run against the embedded server', async () => {
    const examples = await readmeExamples();
    expect([...examples.keys()]).toEqual(['track', 'push', 'branding', 'verify']);
    await mkdir(EXAMPLES_DIR, { recursive: true });
    process.env.TRACKING_API_URL = baseUrl;
    process.env.TRACKING_API_KEY = key;
    process.env.WEBHOOK_URL = 'http://127.0.0.1:9/hooks';
    const logoFile = fileURLToPath(new URL('logo.png', EXAMPLES_DIR));
    await writeFile(logoFile, pngOf(16, 16));
    process.env.LOGO_FILE = logoFile;
    const modules: Record<string, Record<string, unknown>> = {};
    for (const [name, code] of examples) {
      const file = new URL(`${name}.ts`, EXAMPLES_DIR);
      await writeFile(file, code);
      modules[name] = await import(pathToFileURL(fileURLToPath(file)).href) as Record<string, unknown>;
    }
    expect(modules.track!.trackedStatus).toEqual(expect.any(String));
    expect(modules.push!.watchCarrier).toBe('delhivery');
    expect(modules.branding!.brandedName).toBe('Chai Point');
    const secret = modules.push!.endpointSecret as string;
    expect(secret).toMatch(/^whsec_/);

    // The verify example accepts what the API's signing makes, and refuses a changed body.
    const onDelivery = modules.verify!.onDelivery as (secret: string, body: string, headers: Record<string, string>) => unknown;
    const body = JSON.stringify({ type: 'webhook.test', timestamp: new Date().toISOString(), data: { message: 'hello' } });
    const id = 'evt_readme_1';
    const at = new Date();
    const headers = { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': new Webhook(secret).sign(id, at, body) };
    expect(onDelivery(secret, body, headers)).toMatchObject({ type: 'webhook.test', data: { message: 'hello' } });
    expect(onDelivery(secret, body.replace('hello', 'hullo'), headers)).toBeNull();
  });

  it('verifyWebhook accepts any secret still signing (a rotation) and refuses none that is not', () => {
    const [a, b] = ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD'];
    const body = '{"type":"tracking.delivered","timestamp":"2026-11-19T06:30:00.000Z","data":{}}';
    const at = new Date();
    const headers = { 'webhook-id': 'evt_1', 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': new Webhook(b).sign('evt_1', at, body) };
    expect(verifyWebhook([a, b], body, headers).type).toBe('tracking.delivered');
    expect(() => verifyWebhook(a, body, headers)).toThrow();
  });

  describe('retries', () => {
    const answers = (...list: [number, Record<string, string>?][]) => {
      const seen: number[] = [];
      const fetchFn = async (request: Request) => {
        seen.push(seen.length);
        expect(await request.text()).toBe('{"a":1}');
        const [status, headers] = list[Math.min(seen.length - 1, list.length - 1)]!;
        return new Response(status === 200 ? '{}' : '{"error":{}}', { status, headers });
      };
      return { seen, fetchFn };
    };
    const waits: number[] = [];
    const sleep = async (ms: number) => { waits.push(ms); };
    const request = () => new Request('http://api.test/v1/track/batch', { method: 'POST', body: '{"a":1}' });

    it('a 429 with Retry-After is tried again after that many seconds, the body sent again', async () => {
      waits.length = 0;
      const { seen, fetchFn } = answers([429, { 'Retry-After': '1' }], [200]);
      expect((await retryingFetch(fetchFn, { sleep })(request())).status).toBe(200);
      expect(seen).toHaveLength(2);
      expect(waits).toEqual([1000]);
    });

    it('a 429 without Retry-After, or longer than maxWaitSeconds (a used-up quota), is returned at once', async () => {
      waits.length = 0;
      for (const headers of [{}, { 'Retry-After': '3600' }] as Record<string, string>[]) {
        const { seen, fetchFn } = answers([429, headers], [200]);
        expect((await retryingFetch(fetchFn, { sleep })(request())).status).toBe(429);
        expect(seen).toHaveLength(1);
      }
      expect(waits).toEqual([]);
    });

    it('a 502 is tried again with a doubling backoff, at most `retries` times', async () => {
      waits.length = 0;
      const { seen, fetchFn } = answers([502]);
      expect((await retryingFetch(fetchFn, { sleep, retries: 3, backoffMs: 100 })(request())).status).toBe(502);
      expect(seen).toHaveLength(4);
      expect(waits).toEqual([100, 200, 400]);
    });

    it('Retry-After in seconds or as an HTTP date', () => {
      expect(retryAfterSeconds('2')).toBe(2);
      expect(retryAfterSeconds(new Date(Date.UTC(2026, 0, 1, 0, 0, 10)).toUTCString(), Date.UTC(2026, 0, 1))).toBe(10);
      expect(retryAfterSeconds(null)).toBeNull();
      expect(retryAfterSeconds('soon')).toBeNull();
    });
  });
});
