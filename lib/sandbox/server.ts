/**
 * The sandbox carrier network as one HTTP server: every carrier's routes under `/<slug>`, answering
 * from the scenario engine. Behaviour that is the same for every carrier lives here, not in the
 * renderers: the down carrier (17), the slow carrier (18) and injected faults (latency, error rate,
 * outage) that load and failure tests switch at run time through `/_faults`.
 */
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { z } from 'zod';
import { RENDERERS } from './renderers.ts';
import { AnchorBook } from './anchors.ts';
import { ProgressBook, answerFor } from './scenario.ts';
import type { SandboxRenderer, SandboxRequest, SandboxRoute, ScenarioAnswer } from './types.ts';
import { seededRandom } from '../random/seeded-random.ts';

/** Faults injected into one carrier's answers. */
export interface CarrierFaults {
  /** Added to every answer. Default 0. */
  latencyMs: number;
  /** Share of calls (0..1) answered 503, drawn from a seeded PRNG. Default 0. */
  errorRate: number;
  /** Every call answered 503. Default false. */
  outage: boolean;
  /**
   * Every number answered with the carrier's own "no data" answer, as a carrier answers numbers it
   * never issued (tests of auto-detection, where several carriers' shapes fit one number). Absent: false.
   */
  unknown?: boolean;
}

export const FaultsSchema = z.object({
  latencyMs: z.number().int().min(0).max(600_000).optional(),
  errorRate: z.number().min(0).max(1).optional(),
  outage: z.boolean().optional(),
  unknown: z.boolean().optional(),
}).strict();
export type FaultsInput = z.infer<typeof FaultsSchema>;

const NO_FAULTS: CarrierFaults = { latencyMs: 0, errorRate: 0, outage: false };

export interface SandboxOptions {
  /** The carriers served; default all 11. */
  renderers?: readonly SandboxRenderer[];
  /** Epoch ms "now" of the scenarios; default Date.now. */
  clock?: () => number;
  /** Faults per carrier slug at start. */
  faults?: Record<string, FaultsInput>;
  /** Seed of the error-rate PRNG (each carrier gets its own sequence from it). Default 1. */
  seed?: number;
  /** Fastify's logger option; default off. */
  logger?: boolean;
}

/** `SANDBOX_FAULTS` (JSON object slug → faults) → faults; throws with a readable message when invalid. */
export function parseFaultsEnv(text: string | undefined): Record<string, FaultsInput> {
  if (text === undefined || text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(`SANDBOX_FAULTS is not JSON: ${(error as Error).message}`, { cause: error });
  }
  const parsed = z.record(z.string(), FaultsSchema).safeParse(value);
  if (!parsed.success) throw new Error(`SANDBOX_FAULTS is invalid: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

function seedFor(seed: number, slug: string): number {
  let h = seed >>> 0;
  for (let i = 0; i < slug.length; i++) h = Math.imul(h ^ slug.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/** Faults and error sequences of every carrier, changeable while the server runs. */
class FaultTable {
  private readonly faults = new Map<string, CarrierFaults>();
  private readonly randoms = new Map<string, () => number>();

  private readonly slugs: readonly string[];
  private readonly seed: number;
  constructor(slugs: readonly string[], seed: number) {
    this.slugs = slugs;
    this.seed = seed;
    for (const slug of slugs) this.set(slug, {});
  }

  has(slug: string): boolean {
    return this.faults.has(slug);
  }

  /** Replaces a carrier's faults (absent fields → no fault) and restarts its error sequence. */
  set(slug: string, input: FaultsInput): CarrierFaults {
    const faults = { ...NO_FAULTS, ...input };
    this.faults.set(slug, faults);
    this.randoms.set(slug, seededRandom(seedFor(this.seed, slug)));
    return faults;
  }

  get(slug: string): CarrierFaults {
    return this.faults.get(slug) ?? NO_FAULTS;
  }

  all(): Record<string, CarrierFaults> {
    return Object.fromEntries(this.slugs.map((slug) => [slug, this.get(slug)]));
  }

  /** True when this call should fail by the carrier's error rate. */
  drawError(slug: string): boolean {
    const { errorRate } = this.get(slug);
    return errorRate > 0 && this.randoms.get(slug)!() < errorRate;
  }
}

const UNAVAILABLE_BODY =
  '<html><head><title>503 Service Temporarily Unavailable</title></head>' +
  '<body><center><h1>503 Service Temporarily Unavailable</h1></center></body></html>';

function sendUnavailable(reply: FastifyReply): FastifyReply {
  return reply.code(503).header('retry-after', '30').type('text/html').send(UNAVAILABLE_BODY);
}

function stringRecord(raw: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (raw === null || typeof raw !== 'object') return out;
  for (const [key, value] of Object.entries(raw)) {
    if (typeof value === 'string') out[key] = value;
    else if (Array.isArray(value) && typeof value[0] === 'string') out[key] = value[0];
  }
  return out;
}

function headerRecord(raw: FastifyRequest['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (value !== undefined) out[key.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

function toSandboxRequest(request: FastifyRequest, prefix: string): SandboxRequest {
  const pathname = request.url.split('?')[0] ?? '';
  return {
    method: request.method,
    path: pathname.slice(prefix.length) || '/',
    query: stringRecord(request.query),
    headers: headerRecord(request.headers),
    body: typeof request.body === 'string' ? request.body : '',
  };
}

/**
 * Answers one carrier call. The route looks the AWB up itself; the answers it saw decide the
 * generic behaviour: a down carrier answers 503, a slow one answers after its delay. Renderers see
 * the slow carrier's shipment as a plain shipment, since the delay is not theirs to apply.
 */
async function answerRoute(
  slug: string, route: SandboxRoute, request: FastifyRequest, reply: FastifyReply, now: number,
  books: { progress: ProgressBook; anchors: AnchorBook }, unknown = false,
): Promise<FastifyReply> {
  const seen: ScenarioAnswer[] = [];
  // Scenarios 25 and 26 move one stage per poll: once per number and request, however often the
  // route reads it.
  const polled = new Set<string>();
  const lookup = (awb: string): ScenarioAnswer => {
    if (unknown) return { kind: 'not_found' };
    const first = !polled.has(awb);
    polled.add(awb);
    const { progress, anchors } = books;
    const revealed = first ? progress.poll(slug, awb, now) : progress.seen(slug, awb);
    const answer = answerFor(slug, awb, now, revealed, anchors.anchor(slug, awb, now));
    seen.push(answer);
    return answer.kind === 'slow' ? { kind: 'shipment', shipment: answer.shipment } : answer;
  };
  let rendered: ReturnType<SandboxRoute['handle']>;
  try {
    rendered = route.handle(toSandboxRequest(request, `/${slug}`), stringRecord(request.params), lookup);
  } catch (error) {
    if (seen.some((a) => a.kind === 'down')) return sendUnavailable(reply);
    throw error;
  }
  if (seen.some((a) => a.kind === 'down')) return sendUnavailable(reply);
  const delayMs = Math.max(0, ...seen.map((a) => (a.kind === 'slow' ? a.delayMs : 0)));
  if (delayMs > 0) await sleep(delayMs);
  return reply.code(rendered.status).type(rendered.contentType).send(rendered.body);
}

export function buildSandboxApp(options: SandboxOptions = {}): FastifyInstance {
  const renderers = options.renderers ?? RENDERERS;
  const clock = options.clock ?? Date.now;
  const faults = new FaultTable(renderers.map((r) => r.slug), options.seed ?? 1);
  // The sandbox's state: scenarios 25-26's stages, and when each number was first polled.
  const books = { progress: new ProgressBook(), anchors: new AnchorBook() };
  for (const [slug, input] of Object.entries(options.faults ?? {})) {
    if (!faults.has(slug)) throw new Error(`faults for unknown sandbox carrier "${slug}"`);
    faults.set(slug, input);
  }

  const app = Fastify({ logger: options.logger ?? false, routerOptions: { ignoreTrailingSlash: true } });
  // Carriers' bodies (JSON, form posts, XML) reach the renderers as the text that was sent.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));

  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/_faults', async () => faults.all());
  app.put<{ Params: { slug: string } }>('/_faults/:slug', async (request, reply) => {
    const { slug } = request.params;
    if (!faults.has(slug)) return reply.code(404).send({ error: `unknown sandbox carrier "${slug}"` });
    let body: unknown;
    try {
      body = JSON.parse(typeof request.body === 'string' && request.body !== '' ? request.body : '{}');
    } catch {
      return reply.code(400).send({ error: 'body must be JSON' });
    }
    const parsed = FaultsSchema.safeParse(body);
    if (!parsed.success) return reply.code(400).send({ error: z.prettifyError(parsed.error) });
    return faults.set(slug, parsed.data);
  });

  for (const renderer of renderers) {
    const { slug } = renderer;
    for (const route of renderer.routes) {
      app.route({
        method: route.method,
        url: `/${slug}${route.path}`,
        handler: async (request, reply) => {
          const current = faults.get(slug);
          if (current.outage || faults.drawError(slug)) return sendUnavailable(reply);
          if (current.latencyMs > 0) await sleep(current.latencyMs);
          return answerRoute(slug, route, request, reply, clock(), books, current.unknown === true);
        },
      });
    }
  }
  return app;
}

export interface RunningSandbox {
  /** e.g. http://127.0.0.1:4010; a carrier's base URL is `${url}/${slug}`. */
  url: string;
  app: FastifyInstance;
  close(): Promise<void>;
}

/** Starts the sandbox in this process (port 0 = a free port). */
export async function startSandbox(
  options: SandboxOptions & { port?: number; host?: string } = {},
): Promise<RunningSandbox> {
  const { port = 0, host = '127.0.0.1', ...appOptions } = options;
  const app = buildSandboxApp(appOptions);
  await app.listen({ port, host });
  const address = app.server.address() as AddressInfo;
  const reachableHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  const urlHost = reachableHost.includes(':') ? `[${reachableHost}]` : reachableHost;
  return {
    url: `http://${urlHost}:${address.port}`,
    app,
    close: () => app.close(),
  };
}
