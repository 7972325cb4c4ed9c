import { resolve } from 'node:path';
import { standingFromStore, standingOf } from '../../../lib/access/index.ts';
import { Analyzer } from '../../../lib/analyzer/index.ts';
import { backendOptionsOf, openBackend, type Backend } from '../../../lib/backend/index.ts';
import type { PollBus } from '../../../lib/bus/index.ts';
import { createCarrierPoller } from '../../../lib/carriers/poll.ts';
import { adminTokenOf, type Env } from '../../../lib/config/index.ts';
import { createDispatcherMetrics, createNoticeMetrics } from '../../../lib/metrics/index.ts';
import { registerReadinessMetrics } from '../../../lib/readiness/index.ts';
import type { ShipmentIndex } from '../../../lib/pipeline/shipment-index.ts';
import type { PredictionBook } from '../../../lib/prediction/index.ts';
import { loadProduct } from '../../../lib/product/index.ts';
import { TrackingService } from '../../../lib/tracking/index.ts';
import { createMailer, noticeSettingsOf } from '../../../lib/notices/index.ts';
import { Billing, RazorpayGateway, type PaymentGateway } from '../../../lib/billing/index.ts';
import { createPush, endpointDisabledMessage, parseAllowedTargets, parseRetrySchedule, type Push } from '../../../lib/push/index.ts';
import { WebhookSender } from '../../../lib/push/sender.ts';
import { BrandingStore } from '../../../lib/branding/index.ts';
import { createNotices, noticesSpentMessage, type MessagingSandboxTarget } from '../../../lib/buyer-notices/index.ts';
import { loadNoticeTemplates } from '../../../lib/config/index.ts';
import { PageLinks } from '../../../lib/push/index.ts';
import type { ApiDeps, ReadinessCheck } from './deps.ts';

/** TRUST_PROXY: "true" or a comma-separated list of proxy addresses/ranges; unset trusts none. */
function trustProxyOf(value: string | undefined): boolean | string {
  if (value === undefined || value === '' || value === 'false') return false;
  return value === 'true' ? true : value;
}

export interface RuntimeOptions {
  /** Base URL of the sandbox carrier network (trk_test_ keys; every key in the embedded default). */
  sandboxUrl: string | null;
  /** The embedded default points live keys at the sandbox too: no real carrier is reachable here. */
  liveTarget: 'carriers' | 'sandbox';
  clock?: () => number;
  /**
   * Prefix of every Redis key of the access store and the cache when REDIS_URL is set; default
   * `trk:`. Tests set their own so runs sharing one Redis never see (or delete) each other's keys.
   */
  redisNamespace?: string;
  /**
   * ClickHouse database of the lane benchmarks when CLICKHOUSE_URL is set; default: a path in the
   * URL, else `tracking` (see resolveTarget). Tests point the API at a database of their own.
   */
  clickhouseDatabase?: string;
  /** Options of the webhook sender (tests shorten the timeout). */
  webhookSender?: ConstructorParameters<typeof WebhookSender>[0];
  /**
   * A sandbox payment gateway (lib/sandbox/gateway.ts): test keys pay there, and live keys too when
   * `liveTarget` is the sandbox and Razorpay is not configured (the embedded default).
   */
  paymentSandbox?: { url: string; keyId: string; keySecret: string; webhookSecret: string } | null;
  /** The process's backend when the start opened one (the combined start shares it); else the runtime opens and owns its own. */
  backend?: Backend;
  /**
   * The sandbox messaging providers (lib/sandbox/messaging.ts): test keys' and trial plans' notices
   * go there, and live keys' too for a channel with no real provider when `liveTarget` is the sandbox.
   */
  messagingSandbox?: MessagingSandboxTarget | null;
}

/** Razorpay when its three variables are set, else null. */
function razorpayOf(env: Env): PaymentGateway | null {
  if (!env.RAZORPAY_KEY_ID || !env.RAZORPAY_KEY_SECRET || !env.RAZORPAY_WEBHOOK_SECRET) return null;
  return new RazorpayGateway({
    apiUrl: env.RAZORPAY_API_URL, keyId: env.RAZORPAY_KEY_ID, keySecret: env.RAZORPAY_KEY_SECRET, webhookSecret: env.RAZORPAY_WEBHOOK_SECRET,
  });
}

/** The API's dependencies plus what owns them: the pieces an app starts, and closes in order. */
export interface ApiRuntime {
  deps: ApiDeps;
  /** Present in the embedded default: the in-process normalizer's view of every shipment. */
  shipments: ShipmentIndex | null;
  bus: PollBus;
  /** Watches, endpoints, change detection and (embedded) delivery. */
  push: Push;
  /** The embedded delivery model's book (insights.prediction, /v1/estimate, eta_changed); tests rebuild it at once. Null with ClickHouse's. */
  predictions: PredictionBook | null;
  /** The backend this runtime's parts came from (its own, or the one the start handed in). */
  backend: Backend;
  /** True when ADMIN_TOKEN was not set and this start generated one (the first start on DATA_DIR). */
  adminTokenGenerated: boolean;
  /** Where the generated token is kept (DATA_DIR/admin-token), or null when ADMIN_TOKEN is set. */
  adminTokenFile: string | null;
  close(): Promise<void>;
}

/**
 * Wires the API on the process's backend (lib/backend: the one place that reads which services are
 * configured); opens one from the environment when the start does not hand one in, and then owns it.
 */
export async function createApiRuntime(env: Env, options: RuntimeOptions): Promise<ApiRuntime> {
  const clock = options.clock ?? Date.now;
  const product = loadProduct(resolve(env.CONFIG_DIR));
  const dataDir = resolve(env.DATA_DIR);
  const backend = options.backend ?? openBackend(backendOptionsOf(env, {
    dataDir, clock, name: 'tracking-api',
    ...(options.redisNamespace ? { namespace: options.redisNamespace } : {}),
    ...(options.clickhouseDatabase ? { clickhouseDatabase: options.clickhouseDatabase } : {}),
  }));
  const metrics = backend.metrics;
  const access = backend.access(product.config.plans);
  const cache = backend.cache({
    maxBytes: env.CACHE_MAX_BYTES,
    onError: (err) => console.error('a delivered record could not be written under DATA_DIR/records:', (err as Error).message),
  });
  const carriers = createCarrierPoller({ sandboxUrl: options.sandboxUrl, liveTarget: options.liveTarget, clock });
  const lanes = backend.lanes(product);
  const predictions = backend.predictions();
  const mailer = createMailer(env, { from: noticeSettingsOf(env).from });
  const bus = await backend.bus(product);
  const embedded = backend.embeddedPipeline();
  const tracking = new TrackingService({ cache, carriers, bus, rules: product.rules, lanes: lanes.stats, metrics, clock, predictor: predictions.predictor });

  // Customer notices: contacts sealed beside the watches; in the embedded default this process sends them.
  const pushKv = backend.kv('push');
  const branding = new BrandingStore(backend.kv('branding'));
  const noticesBase = { get: (): string => env.PUBLIC_BASE_URL ?? 'http://localhost' };
  const notices = createNotices({
    env, kv: pushKv, access, plans: product.config.plans, templates: loadNoticeTemplates(resolve(env.CONFIG_DIR)), branding, pages: new PageLinks(pushKv),
    carrierNameOf: (slug) => product.config.carriers.find((c) => c.slug === slug)?.name ?? slug,
    baseUrl: () => noticesBase.get(),
    sandbox: options.messagingSandbox ?? null,
    liveFallsBackToSandbox: options.liveTarget === 'sandbox',
    from: noticeSettingsOf(env).from,
    onAllowanceSpent: async (key) => { await mailer.send(noticesSpentMessage(key, product.config.plans[key.plan].notices)); },
    // Embedded: this process sends them (distributed: the dispatcher app, which counts them).
    metrics: backend.pipeline === 'embedded' ? createNoticeMetrics(metrics.registry) : null,
    clock,
    log: (level, message) => console[level === 'info' ? 'log' : level](message),
  });

  const allowedTargets = parseAllowedTargets(env.WEBHOOK_ALLOWED_TARGETS);
  // Embedded: this process delivers webhooks itself, and /metrics counts its attempts as the dispatcher app's does.
  const deliveries = backend.pipeline === 'embedded' ? createDispatcherMetrics(metrics.registry) : null;
  const push = createPush({
    kv: pushKv,
    notices: notices.notices,
    onWatchRemoved: async (prefix, carrier, awb) => { await notices.vault.erase(prefix, carrier, awb); },
    standing: standingFromStore(access),
    currentRecord: (carrier, awb, mode) => tracking.peekShipment(carrier, awb, mode),
    lanes: lanes.stats,
    predictor: predictions.predictor,
    // With Kafka, events go there (the dispatcher app delivers them); else to this process's dispatcher.
    events: backend.pushEvents(),
    sender: new WebhookSender({ allowedTargets, ...options.webhookSender }),
    ...(deliveries ? { onAttempt: (row) => deliveries.attempt(row.status_code) } : {}),
    targets: { allowedTargets, lookup: options.webhookSender?.lookup },
    clock,
    retrySchedule: parseRetrySchedule(env.WEBHOOK_RETRY_SCHEDULE),
    log: (level, message) => console[level === 'info' ? 'log' : level](message),
    onDisabled: async (endpoint, reason) => {
      const key = await access.getByPrefix(endpoint.key_prefix);
      if (key) await mailer.send(endpointDisabledMessage(key.email, endpoint, reason));
    },
  });
  if (backend.pipeline === 'embedded') {
    push.dispatcher.start();
    notices.notices.start();
  }

  // Push: a change of a watched shipment becomes an event, queued durably before the next poll.
  embedded?.onNormalized(async (poll, mode, result) => { await push.detector.handle(poll, mode, result); });

  // The shipment analyzer: its state beside push's (Redis or DATA_DIR), its runner in every API process.
  const analyzer = new Analyzer({
    kv: push.kv, tracking, network: lanes.windows, plans: product.config.plans, events: push.events, clock,
    // Revoked keys' analyses stop, suspended ones wait: the one rule push's workers ask too.
    standing: standingFromStore(access),
    runner: { retryDelaysMs: parseRetrySchedule(env.ANALYZER_RETRY_SCHEDULE, 'ANALYZER_RETRY_SCHEDULE').map((s) => s * 1000) },
    // Distributed: every shipment of a completed analysis becomes a row of analysis_shipments.
    ...backend.analysisRows(),
    log: (level, message, err) => console[level === 'info' ? 'log' : 'error'](message, err ?? ''),
  });
  analyzer.start();
  // Payments beside the keys; settled ones also in ClickHouse's payments table when it is set.
  const sandboxGateway = options.paymentSandbox
    ? new RazorpayGateway({
      apiUrl: options.paymentSandbox.url,
      keyId: options.paymentSandbox.keyId,
      keySecret: options.paymentSandbox.keySecret,
      webhookSecret: options.paymentSandbox.webhookSecret,
    }, 'sandbox', [new URL(options.paymentSandbox.url).origin])
    : null;
  const billing = new Billing({
    access, plans: product.config.plans, mailer, clock,
    payments: backend.payments(),
    live: razorpayOf(env) ?? (options.liveTarget === 'sandbox' ? sandboxGateway : null),
    test: sandboxGateway,
    report: backend.paymentReport(),
    onRenewed: async (key) => {
      const standing = standingOf(key, new Date(clock()));
      await push.keyChanged(key.prefix, key.mode, standing);
      // Held analyses go on at once.
      await analyzer.keyChanged(key.prefix, standing);
    },
    log: (level, message) => console[level === 'info' ? 'log' : level](message),
  });

  const readiness: ReadinessCheck[] = [
    { name: 'access', check: async () => { await access.getByPrefix('trk_test_0000000'); } },
    ...backend.readiness(),
  ];
  if (options.sandboxUrl) {
    const url = options.sandboxUrl;
    readiness.push({
      name: 'carrier-sandbox',
      check: async () => {
        const res = await fetch(`${url}/healthz`);
        if (!res.ok) throw new Error(`HTTP ${res.status}`);
      },
    });
  }

  registerReadinessMetrics(metrics.registry, readiness, bus);
  // ADMIN_TOKEN, else generated once and kept in DATA_DIR (lib/config/admin-token.ts).
  const admin = adminTokenOf(env.ADMIN_TOKEN, dataDir);
  const adminToken = admin.token;
  return {
    deps: {
      product, access, billing, idempotency: backend.idempotency(), tracking, push, analyzer, throttle: backend.throttle(), mailer,
      // Its own store (DATA_DIR/branding, Redis `<ns>branding:`): backed up and restored as one piece.
      branding,
      notices: {
        ...notices,
        whatsappAppSecret: env.WHATSAPP_APP_SECRET ?? options.messagingSandbox?.whatsapp.appSecret ?? null,
        whatsappVerifyToken: env.WHATSAPP_VERIFY_TOKEN ?? null,
        smsInboundToken: env.SMS_INBOUND_TOKEN ?? null,
        bindBase(base) { if (!env.PUBLIC_BASE_URL) noticesBase.get = base; },
      },
      lanes: lanes.windows, estimator: predictions.estimator, metrics, adminToken, clock, readiness,
      logLevel: env.LOG_LEVEL, trustProxy: trustProxyOf(env.TRUST_PROXY), publicBaseUrl: env.PUBLIC_BASE_URL,
      pageViewsPerMinute: env.TRACKING_PAGE_VIEWS_PER_MINUTE,
    },
    shipments: embedded?.shipments ?? null,
    bus,
    push,
    predictions: predictions.book,
    backend,
    adminTokenGenerated: admin.source === 'created',
    adminTokenFile: admin.file,
    async close() {
      await analyzer.stop();
      // Polls published so far reach the normalizer (and push detection) before push closes.
      await bus.flush();
      await notices.close();
      await push.close();
      mailer.close();
      await carriers.close();
      await billing.close();
      // The stores, the bus, the books and the connections: closed by the backend's owner.
      if (!options.backend) await backend.close();
    },
  };
}
