/**
 * What several bench files share to measure servers: API servers forked from bench/servers/ (each
 * in a process of its own, so the load generator never shares its event loop), their environment
 * and keys, the services' URLs, autocannon runs; and a section's progress lines on stderr.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { HEAP_POLICY_FLAGS, withMallocPolicy } from '../apps/api/context/heap-policy.ts';
import { withoutProjectEnv } from '../lib/config/index.ts';
import type { ChildMessage, CpuMessage, MemoryMessage, ReadyMessage } from './servers/protocol.ts';
import * as redisClusterService from '../test/services/redis-cluster.ts';
import * as redisService from '../test/services/redis.ts';

export const REPO_ROOT = fileURLToPath(new URL('../', import.meta.url));
const SERVERS_DIR = fileURLToPath(new URL('./servers/', import.meta.url));
/** The admin token of every bench server (serverEnv). */
const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef';
/** autocannon's connections unless a run says otherwise. */
export const LOAD_CONNECTIONS = 50;

/** A section's progress lines on stderr, each prefixed with its name. */
export const progressLog = (section: string) => (line: string) => { process.stderr.write(`${section}: ${line}\n`); };

export interface Server {
  name: string;
  child: ChildProcess;
  url: string;
  adminToken?: string;
  memory(): Promise<MemoryMessage>;
  /** CPU time the server process used so far (user + system), in microseconds. */
  cpu(): Promise<number>;
  stop(): Promise<number | null>;
}

function nextMessage<T extends ChildMessage['type']>(child: ChildProcess, type: T): Promise<Extract<ChildMessage, { type: T }>> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: ChildMessage) => {
      if (message.type !== type) return;
      cleanup();
      resolve(message as Extract<ChildMessage, { type: T }>);
    };
    const onExit = (code: number | null) => { cleanup(); reject(new Error(`server child exited (${code}) before sending "${type}"`)); };
    const cleanup = () => { child.off('message', onMessage); child.off('exit', onExit); };
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

/** Forks a server script of bench/servers/ (node strips the types itself) and waits for its URL. */
export async function startServer(name: string, script: string, env: NodeJS.ProcessEnv, profileDir: string | null): Promise<Server> {
  const child = fork(join(SERVERS_DIR, script), [], {
    cwd: REPO_ROOT,
    // The embedded default's heap and malloc policy, as npm start passes them (not with Redis: apps/api/context/heap-policy.ts).
    env: env.REDIS_URL ? env : withMallocPolicy(env),
    execArgv: [...(env.REDIS_URL ? [] : HEAP_POLICY_FLAGS), '--expose-gc', ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [])],
    // Logs (the API's default level writes a line per request) go where a deployment's would not
    // be read back by this process: /dev/null. Errors still show.
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const ready: ReadyMessage = await nextMessage(child, 'ready');
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    name, child, url: ready.url, ...(ready.adminToken ? { adminToken: ready.adminToken } : {}),
    async memory() {
      const answer = nextMessage(child, 'memory');
      child.send({ type: 'memory' });
      return answer;
    },
    async cpu() {
      const answer = nextMessage(child, 'cpu');
      child.send({ type: 'cpu' });
      const { user, system }: CpuMessage = await answer;
      return user + system;
    },
    async stop() {
      if (child.exitCode === null) child.send({ type: 'stop' });
      const timeout = setTimeout(() => child.kill('SIGKILL'), 30_000);
      try {
        return await exited;
      } finally {
        clearTimeout(timeout);
      }
    },
  };
}

/** Awaits a starting server and adds it to `servers`, which the bench stops at the end whatever happens. */
export async function tracked(servers: Server[], starting: Promise<Server>): Promise<Server> {
  const server = await starting;
  servers.push(server);
  return server;
}

/** REDIS_URL, else our own Redis (`npm run services -- up`; test/services/redis.ts). */
export const redisUrl = (): string => process.env.REDIS_URL || redisService.url();

/** REDIS_CLUSTER_URL, else our own Redis Cluster (`npm run services -- up`; test/services/redis-cluster.ts). */
export const redisClusterUrl = (): string => process.env.REDIS_CLUSTER_URL || redisClusterService.url();

/** A server's environment: none of the project's variables but `extra` (so defaults, LOG_LEVEL info). */
export function serverEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return { ...withoutProjectEnv(process.env), ADMIN_TOKEN, ...extra };
}

/** A key with limits no benchmark reaches, created through the admin API. */
export async function createBenchKey(server: Server, label = server.name): Promise<string> {
  const res = await fetch(`${server.url}/admin/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      plan: 'business', mode: 'test', email: `bench-${label}@example.com`,
      lookups_limit: 1_000_000_000, daily_quota: 1_000_000_000, burst_per_second: 1_000_000_000,
    }),
  });
  const text = await res.text();
  if (res.status !== 201) throw new Error(`${server.name}: POST /admin/keys → ${res.status} ${text}`);
  return (JSON.parse(text) as { key: string }).key;
}

export interface LoadFigures {
  requestsPerSecond: number;
  /** Latencies of every answered request, in ms, as autocannon timed them. */
  latencies: number[];
  total: number;
}

/** An autocannon run (LOAD_CONNECTIONS unless `options` say otherwise); throws on any error, timeout or non-2xx answer. */
export async function load(url: string, options: Partial<autocannon.Options>, what: string): Promise<LoadFigures> {
  const latencies: number[] = [];
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon({ url, connections: LOAD_CONNECTIONS, ...options }, (err: unknown, res) => (err ? reject(err) : resolve(res)));
    instance.on('response', (_client, _status, _bytes, ms) => { latencies.push(ms); });
  });
  const total = result.requests.total;
  if (result.errors > 0 || result.timeouts > 0 || result.non2xx > 0) {
    throw new Error(`${what}: ${result.errors} errors, ${result.timeouts} timeouts, ${result.non2xx} non-2xx answers of ${total}`);
  }
  return { requestsPerSecond: total / result.duration, latencies, total };
}
