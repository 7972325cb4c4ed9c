/**
 * The one-screen banner every app prints once it has started: what it is, what it connects to
 * (service URLs with any user name and password replaced), where its health and metrics are, and
 * what to do next. A newcomer reads this first; logs that follow are for when something changes.
 */
import type { Env } from '../config/index.ts';

/** A URL (or comma-separated list of them) with credentials and secret-looking query values replaced by `***`. */
export function redactUrl(text: string): string {
  return text.split(',').map((part) => {
    const trimmed = part.trim();
    let url: URL;
    try {
      url = new URL(trimmed);
    } catch {
      // host:port lists (KAFKA_BROKERS) carry no credentials; anything else unparsable is hidden
      // whole rather than risk printing a secret.
      return /^[\w.-]+:\d+$/.test(trimmed) ? trimmed : '***';
    }
    if (url.username) url.username = '***';
    if (url.password) url.password = '***';
    for (const key of [...url.searchParams.keys()]) {
      if (/pass|secret|token|key|auth/i.test(key)) url.searchParams.set(key, '***');
    }
    // URL encodes the stars in the userinfo; the reader should see them plainly.
    return url.toString().replace(/%2A%2A%2A/g, '***').replace(/(?<=:\/\/[^/]*)\/$/, '');
  }).join(',');
}

export interface Banner {
  /** One line: the app's name and what it does. */
  title: string;
  /** Label and value pairs, printed aligned. */
  lines: readonly (readonly [string, string])[];
  /** Free lines after the table (next steps). */
  next?: readonly string[];
}

export function formatBanner(banner: Banner): string {
  const width = Math.max(...banner.lines.map(([label]) => label.length)) + 1;
  const out = ['', banner.title, ...banner.lines.map(([label, value]) => `  ${`${label}:`.padEnd(width)} ${value}`)];
  if (banner.next?.length) out.push('', ...banner.next.map((line) => (line ? `  ${line}` : '')));
  out.push('');
  return `${out.join('\n')}\n`;
}

/** The services lines of the distributed apps, from the environment (unset ones say so). */
export function serviceLines(
  env: Pick<Env, 'KAFKA_BROKERS' | 'CLICKHOUSE_URL' | 'CLICKHOUSE_DATABASE' | 'REDIS_URL'>, uses: readonly ('kafka' | 'clickhouse' | 'redis')[],
): [string, string][] {
  const lines: [string, string][] = [];
  if (uses.includes('kafka')) lines.push(['Kafka', env.KAFKA_BROKERS ? redactUrl(env.KAFKA_BROKERS) : '(KAFKA_BROKERS not set)']);
  if (uses.includes('clickhouse')) {
    lines.push([
      'ClickHouse',
      env.CLICKHOUSE_URL ? `${redactUrl(env.CLICKHOUSE_URL)}   database ${env.CLICKHOUSE_DATABASE ?? 'tracking'}` : '(CLICKHOUSE_URL not set)',
    ]);
  }
  if (uses.includes('redis')) lines.push(['Redis', env.REDIS_URL ? redactUrl(env.REDIS_URL) : '(REDIS_URL not set)']);
  return lines;
}

/** Prints the banner on stdout, where `npm run <app>` shows it above the JSON log lines. */
export function printBanner(banner: Banner, write: (text: string) => void = (text) => process.stdout.write(text)): void {
  write(formatBanner(banner));
}

/** Where a started health server listens (`http://host:port`), or null when it was not started. */
export function listeningUrl(server: { address(): unknown }): string | null {
  const address = server.address();
  if (!address || typeof address !== 'object' || !('port' in address)) return null;
  const { address: host, port } = address as { address: string; port: number };
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** The health lines of a distributed app's own HTTP server (/healthz, /readyz, /metrics). */
export function healthLines(server: { address(): unknown }): [string, string][] {
  const base = listeningUrl(server);
  if (!base) return [['health', '(no health server: running inside another process)']];
  return [['health', `${base}/healthz   ${base}/readyz`], ['metrics', `${base}/metrics   (Prometheus text)`]];
}
