/** Test support: the Redis Cluster of the test services (test/services) and namespace clean-up on either kind. */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Cluster } from 'ioredis';
import { connectRedis, type RedisClient } from '../connect.ts';

async function clusterAnswers(url: string): Promise<boolean> {
  const probe = connectRedis(url, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 1000 }, () => undefined) as Cluster;
  try {
    await probe.connect();
    return (await probe.cluster('INFO')).includes('cluster_state:ok');
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

let clusterUrl: Promise<string> | undefined;
/**
 * The 3-master Redis Cluster of the test services (test/services/redis-cluster.ts), at the address
 * the run's globalSetup provided. urls.ts is loaded on demand: it imports vitest, and benches and
 * the crash tests' child processes import this file outside vitest.
 */
export function testRedisClusterUrl(): Promise<string> {
  clusterUrl ??= (async () => {
    const url = (await import('../../../test/services/urls.ts')).testServiceUrl('redis-cluster');
    if (await clusterAnswers(url)) return url;
    throw new Error(`No Redis Cluster at ${url}: run the tests with vitest (its globalSetup starts the services) or \`npm run services -- up\`.`);
  })();
  return clusterUrl;
}

/** Every key under `namespace`; on a cluster, from every master (SCAN sees one node only). */
export async function keysUnder(redis: RedisClient, namespace: string): Promise<string[]> {
  const nodes = redis instanceof Cluster ? redis.nodes('master') : [redis];
  const keys: string[] = [];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, batch] = await node.scan(cursor, 'MATCH', `${namespace}*`, 'COUNT', 1000);
      keys.push(...batch);
      cursor = next;
    } while (cursor !== '0');
  }
  return keys.sort();
}

/** Deletes the keys under `namespace`, one DEL per key (keys of a cluster live in many slots). */
export async function deleteUnder(redis: RedisClient, namespace: string): Promise<void> {
  await Promise.all((await keysUnder(redis, namespace)).map((key) => redis.del(key)));
}

/** A Redis Cluster of a test's own: its own ports and files, never the shared one. */
export interface ScratchCluster {
  url: string;
  ports: number[];
  /** SIGKILLs the node on `port` (no shutdown: what was not fsynced is lost). */
  kill(port: number): void;
  /** Starts the node on `port` again from its files (AOF, nodes.conf) and waits until the cluster is ok. */
  restart(port: number): Promise<void>;
  /** The port of the master serving `key`. */
  masterOf(key: string): Promise<number>;
  stop(): Promise<void>;
}

async function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** `count` ports whose cluster bus ports (+10000) are free too, from `from` up. */
async function freeClusterPorts(count: number, from: number): Promise<number[]> {
  const ports: number[] = [];
  for (let port = from; ports.length < count && port < from + 500; port++) {
    if ((await portFree(port)) && (await portFree(port + 10_000))) ports.push(port);
  }
  if (ports.length < count) throw new Error(`no ${count} free ports for a scratch cluster from ${from}`);
  return ports;
}

async function until(what: string, check: () => Promise<boolean>, attempts = 300): Promise<void> {
  for (let i = 0; i < attempts; i++) {
    if (await check().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${what}: not within ${attempts / 10} s`);
}

/**
 * Starts `masters` redis-server nodes (Debian's, as `npm run services` does) on free loopback ports
 * from `fromPort`, forms them into a cluster without replicas and waits until it is ok. Every node
 * writes an AOF fsynced before each reply (`appendfsync always`), so a node killed and restarted
 * comes back with every write it acknowledged.
 */
export async function startScratchCluster(options: { masters?: number; fromPort?: number } = {}): Promise<ScratchCluster> {
  const run = promisify(execFile);
  const ports = await freeClusterPorts(options.masters ?? 3, options.fromPort ?? 7600);
  const dir = await mkdtemp(join(tmpdir(), 'scratch-cluster-'));
  const children = new Map<number, ChildProcess>();
  const cli = async (port: number, ...args: string[]) => (await run('redis-cli', ['-p', String(port), ...args])).stdout;
  const start = async (port: number) => {
    const nodeDir = join(dir, String(port));
    await mkdir(nodeDir, { recursive: true });
    const child = spawn('redis-server', [
      '--port', String(port), '--bind', '127.0.0.1', '--dir', nodeDir,
      '--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '2000',
      '--appendonly', 'yes', '--appendfsync', 'always', '--save', '',
    ], { stdio: 'ignore' });
    children.set(port, child);
    await until(`redis-server on ${port}`, async () => (await cli(port, 'ping')).trim() === 'PONG');
  };
  const clusterOk = () => until('cluster_state:ok on every node', async () => {
    for (const port of ports) if (!(await cli(port, 'cluster', 'info')).includes('cluster_state:ok')) return false;
    return true;
  });
  const stop = async () => {
    for (const child of children.values()) if (child.exitCode === null) child.kill('SIGKILL');
    children.clear();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    for (const port of ports) await start(port);
    await run('redis-cli', ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes']);
    await clusterOk();
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    url: `redis+cluster://${ports.map((p) => `127.0.0.1:${p}`).join(',')}`,
    ports,
    kill(port) {
      children.get(port)?.kill('SIGKILL');
    },
    async restart(port) {
      const old = children.get(port);
      if (old && old.exitCode === null && old.signalCode === null) await new Promise((resolve) => old.once('exit', resolve));
      await start(port);
      await clusterOk();
    },
    async masterOf(key) {
      const slot = Number((await cli(ports[0]!, 'cluster', 'keyslot', key)).trim());
      const shards = (await cli(ports[0]!, 'cluster', 'slots')).split('\n').map((line) => line.trim());
      // CLUSTER SLOTS as redis-cli prints it: start, end, then the master's host and port (and id).
      for (let i = 0; i + 3 < shards.length; i++) {
        const [from, to, , port] = [Number(shards[i]), Number(shards[i + 1]), shards[i + 2], Number(shards[i + 3])];
        if (Number.isInteger(from) && Number.isInteger(to) && shards[i + 2] === '127.0.0.1' && slot >= from && slot <= to) return port;
      }
      throw new Error(`no master found for slot ${slot}`);
    },
    stop,
  };
}
