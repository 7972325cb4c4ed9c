import type { DestinationStream } from 'pino';
import type { AccessStore } from '../../lib/access/index.ts';
import type { LaneWindowSource } from '../../lib/lanes/index.ts';
import type { Metrics } from '../../lib/metrics/index.ts';
import type { Product } from '../../lib/product/index.ts';
import type { TrackingService } from '../../lib/tracking/index.ts';
import type { Push } from '../../lib/webhooks/index.ts';

/** A dependency the readiness probe checks. */
export interface ReadinessCheck {
  name: string;
  check(): Promise<void>;
}

/** Everything the API needs, created once at start and passed in (no module-level singletons). */
export interface ApiDeps {
  product: Product;
  access: AccessStore;
  tracking: TrackingService;
  /** Watches and webhooks; without it the push routes are not served. */
  push?: Push;
  /** Windowed lane statistics for GET /v1/lanes (the embedded book or ClickHouse's lane_stats). */
  lanes: LaneWindowSource;
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
  /** Trial keys issued per client address per hour on the self-serve page. */
  trialsPerAddressPerHour?: number;
}
