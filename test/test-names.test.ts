/**
 * `npm run test:unit` passes on a machine without services because test files are named by what
 * they need (docs/engineers/tests.md): a plain `*.test.ts` uses none of the helpers that reach Redis, Kafka
 * or ClickHouse; those live in `*.services.test.ts` (or `*.outage.test.ts`).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
/** Helpers that connect to a service (lib/*\/testutil/, the API harness's Redis store). */
const SERVICE_HELPERS = /\b(testRedisUrl|testRedisClusterUrl|redisHarness|createTestDatabase|startFaultyProxy|testKafka|TEST_BROKERS|TEST_CLICKHOUSE_URL|startNormalizer|startPoller|startDispatcher|startScratchCluster|redisClusterHarness)\b|store: 'redis(-cluster)?'|new Redis\(/;

function testFiles(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...testFiles(path));
    else if (entry.name.endsWith('.test.ts')) found.push(relative(ROOT, path));
  }
  return found;
}

describe('test file names', () => {
  it('plain *.test.ts files use no service', () => {
    const files = ['apps', 'lib', 'test'].flatMap((dir) => testFiles(join(ROOT, dir)));
    expect(files.length).toBeGreaterThan(50);
    const plain = files.filter((f) => !/\.(services|outage|browser)\.test\.ts$/.test(f));
    const offenders = plain.filter((f) => f !== 'test/test-names.test.ts' && SERVICE_HELPERS.test(readFileSync(join(ROOT, f), 'utf8')));
    expect(offenders).toEqual([]);
  });
});
