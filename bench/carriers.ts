/**
 * Carrier clients against the sandbox (a separate process, so it does not share our event loop):
 * polls per second through client + parser + normalization, and the latency they add over a bare
 * HTTP exchange of the same native request (the sandbox's own response time), p50 and p99.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { request } from 'undici';
import { ADAPTERS } from '../lib/carriers/adapters.ts';
import { sandboxEndpoint } from '../lib/carriers/endpoints.ts';
import { createCarrierPoller } from '../lib/carriers/poll.ts';
import type { HttpSend } from '../lib/carriers/types.ts';
import { normalizePoll } from '../lib/normalize/index.ts';
import { requireAwb } from '../lib/schemas/index.ts';
import { loadProduct } from '../lib/product/index.ts';
import type { BenchResult } from './report.ts';
import { percentile, round } from './stats.ts';

const ROOT = join(import.meta.dirname, '..');

/** In-transit sandbox numbers (scenario 02) of a carrier's shape, `n` of them. */
function awbsFor(slug: string, n: number): string[] {
  return Array.from({ length: n }, (_, i) => {
    const digits = String(100000 + i).padStart(7, '0');
    if (slug === 'indiapost' || slug === 'speedpost') return `EE${digits}02IN`;
    if (slug === 'professionalcouriers') return `PON${digits}02`;
    if (slug === 'ekart') return `FMPC${digits}0002`;
    if (slug === 'shadowfax') return `SF${digits}02`;
    if (slug === 'dtdc') return `V${digits}02`;
    return `1234${digits}02`;
  });
}

async function startSandboxProcess(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [join(ROOT, 'apps/carrier-sandbox/main.ts')], {
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'inherit'],
  });
  let buffer = '';
  for await (const chunk of child.stdout!) {
    buffer += String(chunk);
    const match = /"url":"(http:\/\/[^"]+)"/.exec(buffer);
    if (match) return { url: match[1]!, child };
  }
  throw new Error('sandbox process exited before listening');
}

export async function benchCarriers(): Promise<BenchResult[]> {
  const { rules } = loadProduct();
  const { url, child } = await startSandboxProcess();
  const slugs = Object.keys(ADAPTERS);
  const poller = createCarrierPoller({ sandboxUrl: url, http: { maxConcurrent: 64 } });
  // The same native request, sent bare: no retries, breaker, limits, parsing or normalization.
  const bareSend: HttpSend = async (req) => {
    const res = await request(req.url, { method: req.method, headers: req.headers, body: req.body });
    return { status: res.statusCode, headers: res.headers as Record<string, string>, body: await res.body.text() };
  };
  try {
    // Latency, one request at a time, bare and full alternating so both see the same machine.
    const bare: number[] = [];
    const full: number[] = [];
    const samples = 60;
    for (const slug of slugs) {
      const adapter = ADAPTERS[slug]!;
      const endpoint = sandboxEndpoint(slug, url);
      for (const awb of awbsFor(slug, samples)) {
        const number = requireAwb(awb);
        let t = performance.now();
        await adapter.fetch(number, endpoint, bareSend);
        bare.push(performance.now() - t);
        t = performance.now();
        const poll = await poller.poll(slug, awb, { mode: 'test' });
        normalizePoll(poll, rules);
        full.push(performance.now() - t);
      }
    }
    bare.sort((a, b) => a - b);
    full.sort((a, b) => a - b);
    // Discard the warm-up: the first samples pay connection setup and JIT.
    const p = (xs: number[], q: number) => percentile(xs, q);

    // Throughput: many polls in flight across all carriers.
    const total = 4_400;
    const work = slugs.flatMap((slug) => awbsFor(slug, total / slugs.length).map((awb) => ({ slug, awb })));
    let next = 0;
    let errors = 0;
    const started = performance.now();
    await Promise.all(Array.from({ length: 32 }, async () => {
      while (next < work.length) {
        const { slug, awb } = work[next++]!;
        const poll = await poller.poll(slug, awb, { mode: 'test' });
        if (poll.outcome !== 'ok') errors++;
        normalizePoll(poll, rules);
      }
    }));
    const pollsPerSecond = work.length / ((performance.now() - started) / 1000);

    return [
      { name: 'polls/s through client + parser + normalize (32 in flight)', value: Math.round(pollsPerSecond), unit: 'polls/s', target: null, pass: errors === 0 ? null : false },
      { name: 'sandbox own response time (bare HTTP), p50', value: round(p(bare, 50), 2), unit: 'ms', target: null, pass: null },
      { name: 'sandbox own response time (bare HTTP), p99', value: round(p(bare, 99), 2), unit: 'ms', target: null, pass: null },
      { name: 'client + parser + normalize, total p50', value: round(p(full, 50), 2), unit: 'ms', target: null, pass: null },
      { name: 'client + parser + normalize, total p99', value: round(p(full, 99), 2), unit: 'ms', target: null, pass: null },
      { name: 'added latency over the sandbox, p50', value: round(p(full, 50) - p(bare, 50), 2), unit: 'ms', target: null, pass: null },
      { name: 'added latency over the sandbox, p99', value: round(p(full, 99) - p(bare, 99), 2), unit: 'ms', target: null, pass: null },
    ];
  } finally {
    await poller.close();
    child.kill('SIGTERM');
    await once(child, 'exit');
  }
}
