/**
 * Health and metrics probes are counted, not logged: a load balancer's /healthz every few seconds
 * wrote a log line each. Other requests keep their one line each.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiHarness, type ApiHarness } from '../testutil/harness.ts';

describe('probes in the request log', () => {
  let h: ApiHarness;
  const lines: { msg: string; req?: { url?: string } }[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) lines.push(JSON.parse(line) as { msg: string });
      done();
    },
  });

  beforeAll(async () => {
    h = await startApiHarness({ logLevel: 'info', deps: (deps) => ({ ...deps, logStream: stream }) });
  });
  afterAll(() => h.close());

  it('/healthz, /readyz and /metrics write no line and are counted by path and status; a lookup writes its line', async () => {
    const { key } = await h.createKey();
    lines.length = 0;
    for (let i = 0; i < 5; i++) expect((await h.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    await h.app.inject({ method: 'GET', url: '/readyz' });
    await h.app.inject({ method: 'GET', url: '/healthz?probe=lb' });
    expect((await h.track(key, 'delhivery', '1234567890102')).statusCode).toBe(200);
    const requestLines = lines.filter((l) => l.msg === 'request completed').map((l) => l.req?.url);
    expect(requestLines).toEqual(['/v1/track/delhivery/1234567890102']);
    expect(await h.metric('http_probe_requests_total', { path: '/healthz', status: '200' })).toBe(6);
    expect(await h.metric('http_probe_requests_total', { path: '/readyz' })).toBe(1);
    // The harness's metric() calls /metrics itself: the two calls above are counted (each once answered).
    expect(await h.metric('http_probe_requests_total', { path: '/metrics' })).toBe(2);
    expect(lines.filter((l) => l.msg === 'request completed')).toHaveLength(1);
  });
});
