/**
 * Our own ClickHouse: Debian's clickhouse-server (18.16) on 127.0.0.1 with the config of
 * clickhouse-config.ts, data and logs in .services/clickhouse (databases survive restarts).
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { writeClickHouseConfig, type ClickHouseLayout } from './clickhouse-config.ts';
import { pickPorts, urlOf } from './ports.ts';
import { alive, logSize, readPid, runDaemonizing, startFailure, stopPid, waitUntil } from './process.ts';
import { STATE_DIR, processExists, withLock } from './state.ts';
import { startOnce } from './lifecycle.ts';

const DIR = join(STATE_DIR, 'clickhouse');
const LAYOUT: ClickHouseLayout = { dir: DIR, config: join(DIR, 'config.xml'), logDir: join(DIR, 'logs') };
/** bench/pipeline.ts reads the server's CPU time through this pidfile. */
export const PIDFILE = join(DIR, 'clickhouse-server.pid');
const STDOUT_LOG = join(LAYOUT.logDir, 'stdout.log');
const ERROR_LOG = join(LAYOUT.logDir, 'clickhouse-server.err.log');
const START_TIMEOUT_MS = 90_000;

export function url(): string {
  return urlOf('clickhouse');
}

/** Ours: the process of the pidfile runs our config (not the machine's packaged server). */
export function running(): boolean {
  return alive(PIDFILE, LAYOUT.config);
}

export function pids(): number[] {
  return running() ? [readPid(PIDFILE)!] : [];
}

/** The HTTP interface's /ping answers "Ok.". */
async function pings(): Promise<boolean> {
  const answer = await fetch(`${url()}/ping`, { signal: AbortSignal.timeout(2_000) });
  return (await answer.text()).trim() === 'Ok.';
}

async function version(): Promise<string> {
  try {
    return (await (await fetch(`${url()}/?query=${encodeURIComponent('SELECT version()')}`, { signal: AbortSignal.timeout(5_000) })).text()).trim();
  } catch {
    return '?';
  }
}

/** Starts our ClickHouse unless it runs; true when this call started it. */
export function start(log: (line: string) => void = console.log): Promise<boolean> {
  return startOnce('clickhouse', { running, url, pids }, log, async () => {
    const [httpPort, tcpPort] = pickPorts('clickhouse', log) as [number, number];
    writeClickHouseConfig(LAYOUT, httpPort, tcpPort);
    rmSync(PIDFILE, { force: true });
    const logs: [string, number][] = [[STDOUT_LOG, logSize(STDOUT_LOG)], [ERROR_LOG, logSize(ERROR_LOG)]];
    // --daemon forks and writes the pidfile itself; the parent returns at once. It runs as the
    // caller (root here): the data lives in the checkout, which the `clickhouse` user could not write.
    const args = [`--config-file=${LAYOUT.config}`, `--pid-file=${PIDFILE}`, '--daemon'];
    if ((await runDaemonizing('clickhouse-server', args, STDOUT_LOG, DIR)) !== 0) throw startFailure('clickhouse: clickhouse-server failed to start', logs);
    // The pidfile appears shortly after the fork; once it has, a dead pid means a failed start.
    let started: number | null = null;
    const died = () => (started ??= readPid(PIDFILE)) !== null && !processExists(started);
    if (!(await waitUntil(async () => (await pings()) && running(), START_TIMEOUT_MS, 500, died))) {
      const why = died() ? 'the server exited during startup' : `no 'Ok.' from ${url()}/ping within ${START_TIMEOUT_MS / 1000} s`;
      throw startFailure(`clickhouse: ${why}`, logs);
    }
    log(`clickhouse: ready at ${url()} (native tcp 127.0.0.1:${tcpPort}, version ${await version()}, pid ${readPid(PIDFILE)})`);
  });
}

export function stop(log: (line: string) => void = console.log): Promise<void> {
  return withLock(() => stopPid('clickhouse', PIDFILE, LAYOUT.config, log));
}
