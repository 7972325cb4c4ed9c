/**
 * The address of a test service, for the test helpers (lib/*\/testutil/): what the run's globalSetup
 * (global-setup.ts) provided, read with vitest's inject(); outside a vitest worker (a bench, a
 * script), where our instance of this checkout is (.services/ports.env). Never a hard-coded port:
 * when the conventional ports are taken, our services run on others.
 */
import { inject } from 'vitest';
import { urlOf, type ServiceName } from './ports.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Each service's address (REDIS_URL, REDIS_CLUSTER_URL, CLICKHOUSE_URL, KAFKA_BROKERS). */
    serviceUrls: Record<ServiceName, string>;
  }
}

export function testServiceUrl(name: ServiceName): string {
  let provided: string | undefined;
  try {
    provided = inject('serviceUrls')?.[name];
  } catch {
    // Not in a vitest worker: vitest's state is not there to read.
  }
  return provided ?? urlOf(name);
}
