/**
 * Test support for the API: the real runtime (embedded store under a temp DATA_DIR, or Redis under a
 * namespace of its own), an in-process sandbox carrier network, and one clock shared by the sandbox,
 * the runtime and the access store, so every time rule is tested by moving the clock, never by waiting.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { deleteUnder, testRedisClusterUrl, testRedisUrl } from '../../../lib/access/testutil/stores.ts';
import { connectRedis } from '../../../lib/redis/index.ts';
import { DEFAULT_CONFIG_DIR, loadEnv, type Env } from '../../../lib/config/index.ts';
import { startSandbox, type FaultsInput, type RunningSandbox } from '../../../lib/sandbox/server.ts';
import {
  ErrorBodySchema, TrackingRecordSchema, UsageRecordSchema,
  type ErrorBody, type ErrorCode, type TrackingRecord, type UsageRecord,
} from '../../../lib/schemas/index.ts';
import { buildApp } from '../app.ts';
import type { ApiDeps } from '../context/deps.ts';
import { createApiRuntime, type ApiRuntime, type RuntimeOptions } from '../context/runtime.ts';
import { ContractChecker, answerRecorder, type RecordedAnswer } from './contract.ts';
import type { KeyMode } from '../../../lib/schemas/index.ts';

/** Where a harness keeps keys and usage: files, one Redis, or the 3-master cluster of `npm run services`. */
export type StoreKind = 'embedded' | 'redis' | 'redis-cluster';

/** The REDIS_URL of a store kind (none for the embedded one). */
export async function redisUrlOf(store: StoreKind): Promise<string | undefined> {
  if (store === 'redis') return testRedisUrl();
  if (store === 'redis-cluster') return testRedisClusterUrl();
  return undefined;
}

/** A Thursday mid-morning UTC: far from midnight, so a test's day never rolls over by accident. */
export const DEFAULT_START = '2026-11-19T06:30:00.000Z';
export { DAY_MS, HOUR_MS, MINUTE_MS } from '../../../lib/time/index.ts';

export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';

/** A clock that only moves when told to: the sandbox, the tracking service and the limits all read it. */
export class TestClock {
  private ms: number;

  constructor(start: string | number = DEFAULT_START) {
    this.ms = typeof start === 'number' ? start : Date.parse(start);
  }

  readonly now = (): number => this.ms;

  advance(ms: number): void {
    this.ms += ms;
  }

  set(at: string | number): void {
    this.ms = typeof at === 'number' ? at : Date.parse(at);
  }

  iso(offsetMs = 0): string {
    return new Date(this.ms + offsetMs).toISOString();
  }
}

/** `POST /admin/keys` body (contracts.md). */
export interface CreateKeyBody {
  plan: 'trial' | 'starter' | 'growth' | 'business';
  mode: KeyMode;
  email: string;
  period_start?: string;
  period_end?: string;
  lookups_limit?: number;
  daily_quota?: number;
  burst_per_second?: number;
}

/** What `POST /admin/keys` answers with. */
export interface CreatedKeyView {
  key: string;
  key_prefix: string;
  plan: string;
  status: string;
  email: string;
  mode: string;
  period: UsageRecord['period'];
  rate_limits: UsageRecord['rate_limits'];
}

export interface HarnessOptions {
  /** Which access store (and cache) the runtime uses; default embedded. */
  store?: StoreKind;
  /** Start instant of the shared clock; default DEFAULT_START. */
  start?: string | number;
  logLevel?: Env['LOG_LEVEL'];
  /** Changes the runtime's dependencies before the app is built (a log stream, a broken dependency, ...). */
  deps?: (deps: ApiDeps) => ApiDeps;
  /**
   * More environment for the runtime, e.g. KAFKA_BROKERS and CLICKHOUSE_URL for the distributed
   * pipeline, or LANE_CACHE_TTL_MS. Applied after the harness's own (DATA_DIR, ADMIN_TOKEN, ...).
   */
  env?: Record<string, string>;
  /** ClickHouse database the runtime reads lane benchmarks from (with CLICKHOUSE_URL in `env`). */
  clickhouseDatabase?: string;
  /** Redis key prefix; give another harness's `namespace` to run a second instance on its data. */
  namespace?: string;
  /** Resolver of webhook host names (a name → addresses table in tests; no DNS here). */
  webhookLookup?: (host: string) => Promise<string[]>;
  /** A sandbox payment gateway (lib/sandbox/gateway.ts) test keys pay through. */
  paymentSandbox?: RuntimeOptions['paymentSandbox'];
  /** The sandbox messaging providers (lib/sandbox/messaging.ts) customer notices go to. */
  messagingSandbox?: RuntimeOptions['messagingSandbox'];
}

export interface ApiHarness {
  app: FastifyInstance;
  runtime: ApiRuntime;
  /** The dependencies the app was built with. */
  deps: ApiDeps;
  sandbox: RunningSandbox;
  clock: TestClock;
  store: StoreKind;
  dataDir: string;
  /** Prefix of every Redis key of this harness (the runtime's `redisNamespace`). */
  namespace: string;
  /** An admin API call with the right bearer token. */
  admin(method: 'GET' | 'POST', url: string, body?: unknown): Promise<LightMyRequestResponse>;
  /** Creates a key through the admin API (asserting 201); defaults: starter, test mode. */
  createKey(overrides?: Partial<CreateKeyBody>): Promise<CreatedKeyView>;
  /** `GET /v1/track/:carrier/:awb` with the key (none when null). The AWB is sent as given. */
  track(key: string | null, carrier: string, awb: string): Promise<LightMyRequestResponse>;
  /** `GET /v1/usage`, asserting 200 and the usage record schema. */
  usage(key: string): Promise<UsageRecord>;
  /** Replaces a sandbox carrier's faults (`{}` clears them). */
  faults(slug: string, faults: FaultsInput): Promise<void>;
  /** `/metrics` sample sum for one metric name, over the series whose labels include `labels`. */
  metric(name: string, labels?: Record<string, string>): Promise<number>;
  /** Carrier polls the app made (the poll latency histogram's count), optionally of one carrier. */
  carrierPolls(carrier?: string): Promise<number>;
  /** Listens on a free loopback port; returns the base URL. */
  listen(): Promise<string>;
  /** Every answer the app sent so far (contract.ts), checked against the documents by close(). */
  answers: RecordedAnswer[];
  /** The mismatches of the answers so far with the app's OpenAPI documents. */
  answerMismatches(): Promise<string[]>;
  /**
   * Closes the app and the runtime and starts them again on the same DATA_DIR or Redis namespace
   * (what a restart keeps); `app`, `runtime` and `deps` are then the new ones.
   */
  restart(): Promise<void>;
  /** Stops the sandbox early (readiness tests); close() copes with it. */
  closeSandbox(): Promise<void>;
  close(): Promise<void>;
}

/** Starts the sandbox, the runtime and the app, all on one TestClock. */
export async function startApiHarness(options: HarnessOptions = {}): Promise<ApiHarness> {
  const store = options.store ?? 'embedded';
  const clock = new TestClock(options.start);
  const dataDir = await mkdtemp(join(tmpdir(), 'api-test-'));
  const redisUrl = await redisUrlOf(store);
  const namespace = options.namespace ?? `test:${randomBytes(6).toString('hex')}:api:`;
  const sandbox = await startSandbox({ port: 0, host: '127.0.0.1', clock: clock.now });
  let sandboxOpen = true;
  const closeSandbox = async () => {
    if (!sandboxOpen) return;
    sandboxOpen = false;
    await sandbox.close();
  };

  const env = loadEnv({
    DATA_DIR: dataDir,
    ADMIN_TOKEN,
    LOG_LEVEL: options.logLevel ?? 'silent',
    CONFIG_DIR: DEFAULT_CONFIG_DIR,
    // Push tests receive webhooks on this machine, as a developer does: the operator's opening of
    // loopback (contracts.md). Tests of the default (nothing private) pass an empty value.
    WEBHOOK_ALLOWED_TARGETS: '127.0.0.1/32',
    // An analysis's carrier errors retried at once (a test of the retries sets its own schedule).
    ANALYZER_RETRY_SCHEDULE: '0.05',
    ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
    ...options.env,
  });
  const start = async () => {
    const started = await createApiRuntime(env, {
      sandboxUrl: sandbox.url, liveTarget: 'sandbox', clock: clock.now, redisNamespace: namespace,
      ...(options.webhookLookup ? { webhookSender: { lookup: options.webhookLookup } } : {}),
      ...(options.clickhouseDatabase ? { clickhouseDatabase: options.clickhouseDatabase } : {}),
      ...(options.paymentSandbox ? { paymentSandbox: options.paymentSandbox } : {}),
      ...(options.messagingSandbox ? { messagingSandbox: options.messagingSandbox } : {}),
    });
    const startedDeps = options.deps ? options.deps(started.deps) : started.deps;
    return { runtime: started, deps: startedDeps, app: await buildApp(startedDeps, { onAnswer: recorder.onAnswer }) };
  };
  const recorder = answerRecorder();
  let { runtime, deps, app } = await start();
  const answerMismatches = async () => {
    const answers = recorder.answers.splice(0);
    const checker = await contractChecker(app);
    recorder.answers.push(...answers);
    return checker.checkAll(answers);
  };

  const admin = (method: 'GET' | 'POST', url: string, body?: unknown) => app.inject({
    method, url,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    ...(body === undefined ? {} : { payload: body as object }),
  });

  const metricsText = async () => {
    const res = await app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    return res.body;
  };

  const metric = async (name: string, labels: Record<string, string> = {}) => {
    let sum = 0;
    for (const line of (await metricsText()).split('\n')) {
      const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (!match || match[1] !== name) continue;
      const seriesLabels = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
      if (Object.entries(labels).every(([k, v]) => seriesLabels[k] === v)) sum += Number(match[3]);
    }
    return sum;
  };

  return {
    get app() { return app; },
    get runtime() { return runtime; },
    get deps() { return deps; },
    sandbox, clock, store, dataDir, namespace, admin, metric, answers: recorder.answers, answerMismatches,
    async restart() {
      const mismatches = await answerMismatches();
      recorder.answers.length = 0;
      expect(mismatches, 'answers that the OpenAPI document does not describe').toEqual([]);
      await app.close();
      await runtime.close();
      ({ runtime, deps, app } = await start());
    },
    async createKey(overrides = {}) {
      const body: CreateKeyBody = { plan: 'starter', mode: 'test', email: `dev-${randomBytes(4).toString('hex')}@example.com`, ...overrides };
      const res = await admin('POST', '/admin/keys', body);
      expect(res.statusCode, res.body).toBe(201);
      return res.json() as CreatedKeyView;
    },
    track(key, carrier, awb) {
      return app.inject({
        method: 'GET',
        url: `/v1/track/${encodeURIComponent(carrier)}/${encodeURIComponent(awb)}`,
        headers: key === null ? {} : { 'x-api-key': key },
      });
    },
    async usage(key) {
      const res = await app.inject({ method: 'GET', url: '/v1/usage', headers: { 'x-api-key': key } });
      expect(res.statusCode, res.body).toBe(200);
      return expectUsage(res.json());
    },
    async faults(slug, faults) {
      const res = await fetch(`${sandbox.url}/_faults/${slug}`, {
        method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(faults),
      });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    },
    carrierPolls: (carrier) => metric('tracking_carrier_poll_seconds_count', carrier ? { carrier } : {}),
    async listen() {
      return app.listen({ port: 0, host: '127.0.0.1' });
    },
    closeSandbox,
    async close() {
      // Every answer this harness's app sent must be one its OpenAPI documents describe (contract.ts).
      const mismatches = await answerMismatches().catch((err: Error) => [`documents not read: ${err.message}`]);
      await app.close();
      await runtime.close();
      await closeSandbox();
      if (redisUrl) {
        const redis = connectRedis(redisUrl);
        try {
          await deleteUnder(redis, namespace);
        } finally {
          await redis.quit();
        }
      }
      await rm(dataDir, { recursive: true, force: true });
      expect(mismatches, 'answers that the OpenAPI document does not describe').toEqual([]);
    },
  };
}

/** Checkers by document text: every harness of a process serves the same documents, compiled once. */
const checkers = new Map<string, ContractChecker>();

/** The checker of `app`'s public and admin documents. */
async function contractChecker(app: FastifyInstance): Promise<ContractChecker> {
  await app.ready();
  const documents = app.apiDocuments();
  const cacheKey = JSON.stringify(documents);
  let checker = checkers.get(cacheKey);
  if (!checker) {
    checker = new ContractChecker([documents.public, documents.admin]);
    checkers.set(cacheKey, checker);
  }
  return checker;
}

/** Asserts a tracking record answer: 200, the response schema, and returns the record. */
export function expectRecord(res: LightMyRequestResponse): TrackingRecord {
  expect(res.statusCode, res.body).toBe(200);
  const parsed = TrackingRecordSchema.safeParse(res.json());
  expect(parsed.success ? [] : parsed.error.issues).toEqual([]);
  return parsed.data!;
}

export function expectUsage(value: unknown): UsageRecord {
  const parsed = UsageRecordSchema.safeParse(value);
  expect(parsed.success ? [] : parsed.error.issues).toEqual([]);
  return parsed.data!;
}

/**
 * Asserts an error answer: the status, the standard body `{error:{code,message,request_id}}` and an
 * `X-Request-Id` header equal to the body's request_id.
 */
export function expectError(res: LightMyRequestResponse, status: number, code: ErrorCode): ErrorBody['error'] {
  expect({ status: res.statusCode, body: res.body }).toMatchObject({ status });
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const parsed = ErrorBodySchema.safeParse(res.json());
  expect(parsed.success ? [] : parsed.error.issues).toEqual([]);
  const error = parsed.data!.error;
  expect(error.code).toBe(code);
  expect(error.message.length).toBeGreaterThan(0);
  expect(error.request_id).toMatch(/^req_[0-9a-f]{32}$/);
  expect(res.headers['x-request-id']).toBe(error.request_id);
  expect(Object.keys(parsed.data!)).toEqual(['error']);
  return error;
}

/** A sandbox consignment number of `carrier` with scenario `scenario` (sandbox.md: the last two digits). */
export function awbFor(carrier: 'delhivery' | 'bluedart' | 'dtdc' | 'professionalcouriers' | 'xpressbees' | 'ekart' | 'shadowfax', scenario: number, lane = 1): string {
  const ss = String(scenario).padStart(2, '0');
  const ll = String(lane).padStart(2, '0');
  switch (carrier) {
    case 'delhivery': return `123456789${ll}${ss}`;
    case 'bluedart': return `1234567${ll}${ss}`;
    case 'dtdc': return `V0119${ll}${ss}`;
    case 'professionalcouriers': return `PON833${ll}${ss}`;
    case 'xpressbees': return `1234567890${ll}${ss}`;
    case 'ekart': return `FMPC027965${ll}${ss}`;
    case 'shadowfax': return `SF12345${ll}${ss}`;
  }
}
