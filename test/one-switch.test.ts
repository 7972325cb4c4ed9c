/**
 * The mode is chosen in one place (lib/backend), and each app is reached only through its start:
 * - no production file outside lib/backend imports a store implementation the switch picks between
 *   (Redis, embedded, Kafka or ClickHouse), nor opens a Redis, Kafka or ClickHouse client itself;
 * - no app's production file imports another app's files other than its start (`apps/<app>/start.ts`).
 * Allowed beside lib/backend: each implementation's own folder (it defines and exports them);
 * lib/move, which copies an embedded DATA_DIR into Redis and Kafka and so needs both sides at once;
 * and the operator commands of apps/cli that are ClickHouse or Kafka tools by definition (sql,
 * replay, the prediction backtest, the history writer's --kafka target).
 */
import { readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, productionFiles } from './support/production-files.ts';

/** What the switch picks between, by the folder that defines it. */
const IMPLEMENTATIONS: Record<string, string[]> = {
  'lib/access': ['RedisAccessStore', 'EmbeddedAccessStore'],
  'lib/billing': ['RedisPaymentStore', 'EmbeddedPaymentStore', 'ClickHousePaymentReport'],
  'lib/cache': ['createRedisCache', 'createMemoryCache'],
  'lib/idempotency': ['RedisIdempotencyStore', 'EmbeddedIdempotencyStore'],
  'lib/kv': ['RedisKv', 'EmbeddedKv'],
  'lib/throttle': ['RedisThrottle', 'EmbeddedThrottle'],
  'lib/redis': ['connectRedis'],
  'lib/kafka': ['createKafka', 'KafkaBus'],
  'lib/push': ['KafkaEventLog'],
  'lib/clickhouse': ['createClickHouseClient', 'ClickHouseLaneSource', 'ClickHouseLaneWindowSource', 'ClickHousePredictionSource'],
  'lib/bus': ['createInProcessBus'],
  'lib/store': ['PollLog'],
};
/** The clients themselves: an implementation folder may open them (a Redis store takes a URL in tests), nothing else. */
const CLIENTS = ['connectRedis', 'createKafka', 'createClickHouseClient'];
const ALLOWED = ['lib/backend/', 'lib/move/', 'apps/cli/commands/sql.ts', 'apps/cli/replay.ts', 'apps/cli/commands/predict.ts', 'apps/cli/commands/sandbox-history.ts'];

/** Every `import { a, b as c } from '...'` of a source: the names and the specifier. */
export function namedImports(source: string): { names: string[]; from: string }[] {
  return [...source.matchAll(/import\s+(?:type\s+)?\{([^}]*)\}\s*from\s*['"]([^'"]+)['"]/g)].map(([, names, from]) => ({
    names: names!.split(',').map((n) => n.trim().replace(/^type\s+/, '').split(/\s+as\s+/)[0]!).filter(Boolean),
    from: from!,
  }));
}

/** The implementations `file` imports from outside their own folder, as `name (folder)`. */
export function implementationImports(file: string, source: string): string[] {
  const found: string[] = [];
  for (const { names, from } of namedImports(source)) {
    if (!from.startsWith('.')) continue;
    const target = relative(ROOT, normalize(join(ROOT, dirname(file), from)));
    for (const [folder, implementations] of Object.entries(IMPLEMENTATIONS)) {
      if (!target.startsWith(`${folder}/`) || file.startsWith(`${folder}/`)) continue;
      const implementationFolder = Object.keys(IMPLEMENTATIONS).some((f) => file.startsWith(`${f}/`));
      for (const name of names) {
        if (implementations.includes(name) && !(implementationFolder && CLIENTS.includes(name))) found.push(`${file}: ${name} (${folder})`);
      }
    }
  }
  return found;
}

/** Another app's files `file` (in apps/<app>/) imports, other than that app's start.ts. */
export function otherAppInternals(file: string, source: string): string[] {
  const app = file.split('/')[1];
  const found: string[] = [];
  for (const [, spec] of source.matchAll(/\b(?:from|import)\s*\(?\s*['"](\.[^'"]+)['"]/g)) {
    const target = relative(ROOT, normalize(join(ROOT, dirname(file), spec!)));
    const [top, other, ...rest] = target.split('/');
    if (top === 'apps' && other !== app && rest.join('/') !== 'start.ts') found.push(`${file} → ${target}`);
  }
  return found;
}

const sources = (dir: string) => productionFiles(dir).map((file) => ({ file, source: readFileSync(join(ROOT, file), 'utf8') }));

describe('one switch', () => {
  it('no production file outside lib/backend imports a Redis, embedded, Kafka or ClickHouse store implementation', () => {
    const files = [...sources('lib'), ...sources('apps')].filter(({ file }) => !ALLOWED.some((allowed) => file.startsWith(allowed)));
    expect(files.length).toBeGreaterThan(300);
    expect(files.flatMap(({ file, source }) => implementationImports(file, source))).toEqual([]);
  });

  it('no start imports another app\'s internals: apps reach each other through apps/<app>/start.ts only', () => {
    const files = sources('apps');
    expect(files.some(({ file }) => file === 'apps/embedded/main.ts')).toBe(true);
    expect(files.flatMap(({ file, source }) => otherAppInternals(file, source))).toEqual([]);
  });

  it('the checks see what they look for', () => {
    expect(implementationImports('apps/poller/start.ts', "import { standingFromStore, RedisAccessStore as R } from '../../lib/access/index.ts';"))
      .toEqual(['apps/poller/start.ts: RedisAccessStore (lib/access)']);
    expect(implementationImports('lib/tracking/x.ts', "import type {\n  KafkaBus,\n} from '../kafka/kafka-bus.ts';")).toEqual(['lib/tracking/x.ts: KafkaBus (lib/kafka)']);
    // A folder's own implementations are its business.
    expect(implementationImports('lib/access/index.ts', "import { RedisAccessStore } from './redis-store.ts';")).toEqual([]);
    expect(otherAppInternals('apps/embedded/main.ts', "import { buildApp } from '../api/app.ts';\nimport { startApi } from '../api/start.ts';"))
      .toEqual(['apps/embedded/main.ts → apps/api/app.ts']);
  });
});
