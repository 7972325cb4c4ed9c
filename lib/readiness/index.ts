import { connect } from 'node:net';
import { Gauge, type Registry } from 'prom-client';
import type { BusHealth } from '../bus/index.ts';
import { SECOND_MS } from '../time/index.ts';

/**
 * A dependency a readiness probe checks. `degrades`: the process still answers without it (lookups
 * are served from the cache and the carriers while Kafka or ClickHouse is away), so its failure
 * makes the process "degraded" — keep routing to it, alert — not "not ready".
 */
export interface ReadinessCheck {
  name: string;
  check(): Promise<void>;
  degrades?: boolean;
}

export interface CheckResult {
  name: string;
  ok: boolean;
  error?: string;
}

export interface Readiness {
  status: 'ready' | 'degraded' | 'not_ready';
  checks: CheckResult[];
}

const CHECK_TIMEOUT_MS = 2 * SECOND_MS;

/** Runs every check (each bounded: a dependency that hangs counts as down) and judges the whole. */
export async function readinessOf(checks: readonly ReadinessCheck[]): Promise<Readiness> {
  const results = await Promise.all(checks.map(async ({ name, check }): Promise<CheckResult> => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
    });
    try {
      await Promise.race([check(), timeout]);
      return { name, ok: true };
    } catch (err) {
      return { name, ok: false, error: (err as Error).message };
    } finally {
      clearTimeout(timer);
    }
  }));
  const failed = checks.filter((_, i) => !results[i]!.ok);
  const status = failed.length === 0 ? 'ready' : failed.every((c) => c.degrades) ? 'degraded' : 'not_ready';
  return { status, checks: results };
}

/**
 * The raw-poll log's check: down while the bus's last attempt failed, and also while it is idle
 * and no broker accepts a connection (an idle producer would not notice Kafka going away).
 */
export function kafkaCheck(bus: { health(): BusHealth }, brokers: string): ReadinessCheck {
  return {
    name: 'kafka',
    degrades: true,
    check: async () => {
      const health = bus.health();
      if (!health.ok) throw new Error(`${health.error ?? 'unavailable'}; ${health.spool_bytes} bytes of polls spooled`);
      await anyReachable(brokers.split(',').map((b) => b.trim()).filter(Boolean));
    },
  };
}

/** Kafka's check in a process without a raw-poll producer (the normalizer, the dispatcher): a broker takes a connection. */
export function brokersCheck(brokers: string): ReadinessCheck {
  return { name: 'kafka', degrades: true, check: () => anyReachable(brokers.split(',').map((b) => b.trim()).filter(Boolean)) };
}

function anyReachable(brokers: string[]): Promise<void> {
  const attempts = brokers.map((broker) => new Promise<void>((resolve, reject) => {
    const at = broker.lastIndexOf(':');
    const socket = connect({ host: broker.slice(0, at), port: Number(broker.slice(at + 1)), timeout: SECOND_MS });
    socket.once('connect', () => { socket.destroy(); resolve(); });
    socket.once('timeout', () => { socket.destroy(); reject(new Error(`${broker}: no answer`)); });
    socket.once('error', (err) => reject(new Error(`${broker}: ${err.message}`)));
  }));
  return Promise.any(attempts).catch((err: AggregateError) => { throw new Error(err.errors.map((e: Error) => e.message).join('; ')); });
}

/**
 * `/metrics`' view of the same: `dependency_up{dependency}` (1 up, 0 down, checked at each scrape)
 * and the raw-poll spool's size and age.
 */
export function registerReadinessMetrics(registry: Registry, checks: readonly ReadinessCheck[], bus: { health(): BusHealth }): void {
  new Gauge({
    name: 'dependency_up', help: 'Whether a dependency answers its readiness check (1) or not (0)', labelNames: ['dependency'], registers: [registry],
    async collect() {
      const { checks: results } = await readinessOf(checks);
      for (const r of results) this.set({ dependency: r.name }, r.ok ? 1 : 0);
    },
  });
  new Gauge({
    name: 'poll_spool_bytes', help: 'Raw polls waiting on disk for Kafka, in bytes', registers: [registry],
    collect() { this.set(bus.health().spool_bytes); },
  });
  new Gauge({
    name: 'poll_spool_oldest_age_seconds', help: 'Age of the oldest raw poll not yet on Kafka (0 when none waits)', registers: [registry],
    collect() { this.set(bus.health().oldest_unsent_age_s); },
  });
}
