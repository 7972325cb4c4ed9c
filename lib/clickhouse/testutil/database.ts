/** Test helpers for the real ClickHouse (tests only; never used by the product). */
import { randomBytes } from 'node:crypto';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { testServiceUrl } from '../../../test/services/urls.ts';
import { createClickHouseClient, resolveTarget, type ClickHouseClient, type ClickHouseTarget } from '../client.ts';
import { migrate } from '../migrate.ts';
import { sqlIdentifier } from '../sql.ts';

/** The ClickHouse of the test services (test/services/clickhouse.ts), as the run's globalSetup provided it. */
export const TEST_CLICKHOUSE_URL = testServiceUrl('clickhouse');

export interface TestDatabase {
  target: ClickHouseTarget;
  client: ClickHouseClient;
  /** Drops the database and closes the client. */
  drop(): Promise<void>;
}

/** A unique, migrated database (tracking_test_<random>) so parallel test files never collide. */
export async function createTestDatabase(options: { migrate?: boolean } = {}): Promise<TestDatabase> {
  const target = resolveTarget(TEST_CLICKHOUSE_URL, `tracking_test_${randomBytes(6).toString('hex')}`);
  if (options.migrate ?? true) {
    await migrate(target);
  } else {
    const admin = createClickHouseClient({ url: target.url });
    await admin.command({ query: `CREATE DATABASE IF NOT EXISTS ${sqlIdentifier(target.database)}` });
    await admin.close();
  }
  const client = createClickHouseClient(target);
  return {
    target,
    client,
    async drop() {
      await client.close();
      await dropDatabase(target.database);
    },
  };
}

export async function dropDatabase(database: string): Promise<void> {
  const admin = createClickHouseClient({ url: TEST_CLICKHOUSE_URL });
  try {
    await admin.command({ query: `DROP DATABASE IF EXISTS ${sqlIdentifier(database)}` });
  } finally {
    await admin.close();
  }
}

/** Rows of a query (JSONEachRow). */
export async function rowsOf<T>(client: ClickHouseClient, query: string): Promise<T[]> {
  const result = await client.query({ query, format: 'JSONEachRow' });
  return result.json<T>();
}

export async function countOf(client: ClickHouseClient, query: string): Promise<number> {
  const [row] = await rowsOf<{ c: string | number }>(client, query);
  return Number(row?.c ?? NaN);
}

/**
 * A TCP proxy in front of ClickHouse that can cut connections, so tests exercise the writer's
 * retries and the lane source's fallback against the real server and the real client.
 */
export interface FaultyProxy {
  url: string;
  /** Cuts the open connections and the next `n` new ones. */
  failNext(n: number): void;
  /** Cuts every connection until up(). */
  down(): void;
  up(): void;
  /** Connections cut so far. */
  readonly cut: number;
  close(): Promise<void>;
}

export async function startFaultyProxy(upstreamUrl: string = TEST_CLICKHOUSE_URL): Promise<FaultyProxy> {
  const upstream = new URL(upstreamUrl);
  const sockets = new Set<Socket>();
  let failures = 0;
  let isDown = false;
  let cut = 0;
  const server: Server = createServer((client) => {
    if (isDown || failures > 0) {
      if (failures > 0) failures--;
      cut++;
      client.destroy();
      return;
    }
    const server = connect(Number(upstream.port || 80), upstream.hostname);
    sockets.add(client);
    sockets.add(server);
    const forget = () => {
      sockets.delete(client);
      sockets.delete(server);
      client.destroy();
      server.destroy();
    };
    client.on('error', forget).on('close', forget);
    server.on('error', forget).on('close', forget);
    client.pipe(server);
    server.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('proxy has no port');
  const cutOpen = () => {
    for (const socket of sockets) {
      cut++;
      socket.destroy();
    }
    sockets.clear();
  };
  return {
    url: `http://127.0.0.1:${address.port}`,
    failNext(n) {
      failures = n;
      cutOpen();
    },
    down() {
      isDown = true;
      cutOpen();
    },
    up() {
      isDown = false;
    },
    get cut() {
      return cut;
    },
    async close() {
      cutOpen();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
