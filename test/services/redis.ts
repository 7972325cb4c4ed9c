/** Our own Redis: Debian's redis-server on 127.0.0.1, nothing persisted, state in .services/redis. */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { pickPorts, urlOf } from './ports.ts';
import { alive, logSize, readPid, runDaemonizing, startFailure, stopPid, waitUntil } from './process.ts';
import { STATE_DIR, withLock } from './state.ts';
import { startOnce } from './lifecycle.ts';

const DIR = join(STATE_DIR, 'redis');
const PIDFILE = join(DIR, 'redis.pid');
const LOG = join(DIR, 'redis.log');
const START_TIMEOUT_MS = 20_000;

/** One command to the Redis on 127.0.0.1:`port` and its reply; throws when nothing answers. */
export async function redisCommand(port: number, command: string, ...args: (string | number)[]): Promise<unknown> {
  const client = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1000 });
  client.on('error', () => undefined); // the rejected command reports it
  try {
    await client.connect();
    return await client.call(command, ...args);
  } finally {
    client.disconnect();
  }
}

/**
 * redis-server's flags for one of our instances (this one and each cluster node): loopback only with
 * protected mode on, daemonized with a pidfile, and no persistence (--save "", no AOF): a cache and
 * test data need none; --dir keeps any stray dump inside .services.
 */
export function redisServerArgs(port: number, dir: string, pidfile: string, logfile: string): string[] {
  return [
    '--port', String(port), '--bind', '127.0.0.1', '--daemonize', 'yes', '--pidfile', pidfile, '--logfile', logfile,
    '--dir', dir, '--save', '', '--appendonly', 'no',
  ];
}

export function url(): string {
  return urlOf('redis');
}

export function running(): boolean {
  return alive(PIDFILE, 'redis-server');
}

export function pids(): number[] {
  return running() ? [readPid(PIDFILE)!] : [];
}

/** Starts our Redis unless it runs; true when this call started it. */
export function start(log: (line: string) => void = console.log): Promise<boolean> {
  return startOnce('redis', { running, url, pids }, log, async () => {
    const [port] = pickPorts('redis', log) as [number];
    mkdirSync(DIR, { recursive: true });
    rmSync(PIDFILE, { force: true });
    const from = logSize(LOG);
    // Errors printed before daemonizing (a bad flag, the port taken) land in the same log.
    if ((await runDaemonizing('redis-server', redisServerArgs(port, DIR, PIDFILE, LOG), LOG)) !== 0) {
      throw startFailure('redis: redis-server failed to start', [[LOG, from]]);
    }
    if (!(await waitUntil(async () => (await redisCommand(port, 'PING')) === 'PONG' && running(), START_TIMEOUT_MS))) {
      throw startFailure(`redis: no PONG on 127.0.0.1:${port} within ${START_TIMEOUT_MS / 1000} s`, [[LOG, from]]);
    }
    log(`redis: ready at ${url()} (pid ${readPid(PIDFILE)})`);
  });
}

export function stop(log: (line: string) => void = console.log): Promise<void> {
  return withLock(() => stopPid('redis', PIDFILE, 'redis-server', log));
}
