import type { DestinationStream } from 'pino';
import type { AccessStore } from '../../../lib/access/index.ts';
import type { Billing } from '../../../lib/billing/index.ts';
import type { Analyzer } from '../../../lib/analyzer/index.ts';
import type { IdempotencyStore } from '../../../lib/idempotency/index.ts';
import type { LaneWindowSource } from '../../../lib/lanes/index.ts';
import type { Metrics } from '../../../lib/metrics/index.ts';
import type { Mailer } from '../../../lib/notices/index.ts';
import type { Estimator } from '../../../lib/prediction/index.ts';
import type { Product } from '../../../lib/product/index.ts';
import type { TrackingService } from '../../../lib/tracking/index.ts';
import type { ServerLimits } from '../http/hardening.ts';
import type { AddressThrottle } from '../../../lib/throttle/index.ts';
import type { Push } from '../../../lib/push/index.ts';
import type { BrandingStore } from '../../../lib/branding/index.ts';
import type { NoticesRuntime } from '../../../lib/buyer-notices/index.ts';

import type { ReadinessCheck } from '../../../lib/readiness/index.ts';
export type { ReadinessCheck };

/** Everything the API needs, created once at start and passed in (no module-level singletons). */
export interface ApiDeps {
  product: Product;
  access: AccessStore;
  /** Renewal pages, payment links, the gateway's webhook and the payments kept (lib/billing). */
  billing: Billing;
  /** Idempotency-Key answers of POST /v1/track/batch (beside the keys: Redis or DATA_DIR). */
  idempotency: IdempotencyStore;
  tracking: TrackingService;
  /** Watches and webhooks; without it the push routes are not served. */
  push?: Push;
  /** Each key's branding of its tracking pages (PUT/GET /v1/branding); without it (or push) those routes are not served. */
  branding?: BrandingStore;
  /**
   * Customer notices (contacts on watches, settings, the list, provider webhooks, unsubscribe);
   * without it (or push) those routes are not served and a watch's `customer` is refused.
   */
  notices?: NoticesRuntime & {
    /** WhatsApp webhooks: the app secret (X-Hub-Signature-256) and the handshake's verify token. */
    whatsappAppSecret: string | null;
    whatsappVerifyToken: string | null;
    smsInboundToken: string | null;
    /** Binds the links in notices to this server's address (PUBLIC_BASE_URL, else where it listens). */
    bindBase(base: () => string): void;
  };
  /** The shipment analyzer; without it its routes are not served. */
  analyzer?: Analyzer;
  /** Windowed lane statistics for GET /v1/lanes (the embedded book or ClickHouse's lane_stats). */
  lanes: LaneWindowSource;
  /** GET /v1/estimate's reading of the delivery model; absent: no carrier has a basis (no estimates). */
  estimator?: Estimator;
  metrics: Metrics;
  /** Bearer token of the admin API. */
  adminToken: string;
  clock: () => number;
  readiness: ReadinessCheck[];
  logLevel?: string;
  /** Where log lines go; default stdout. Tests pass a stream to check what the logs contain. */
  logStream?: DestinationStream;
  /** Fastify's trustProxy: false (default), true, or the proxies' addresses. */
  trustProxy?: boolean | string;
  /** Per-address attempt counts that survive a restart (trial keys issued, wrong admin tokens). */
  throttle: AddressThrottle;
  /** Server limits and timeouts; default hardening.ts SERVER_LIMITS (tests shorten the timeouts). */
  serverLimits?: Partial<ServerLimits>;
  /** PUBLIC_BASE_URL: the base of links handed out; unset, the address the API listens on (public-base.ts). */
  publicBaseUrl?: string | undefined;
  /** Where the trial page's e-mails go (SMTP, else DATA_DIR/outbox); without it the page issues no keys. */
  mailer?: Mailer;
  /** Trial keys issued per client address per hour on the self-serve page. */
  trialsPerAddressPerHour?: number;
  /** Tracking page views per client address per minute (TRACKING_PAGE_VIEWS_PER_MINUTE; default 120). */
  pageViewsPerMinute?: number;
}
