/**
 * Our own Redis Cluster: three masters (no replicas) from the same redis-server binary, for the tests
 * that prove keys, scripts and batching stay within one hash slot. Nothing persisted: every start
 * forms a fresh cluster (the node files are wiped), so a crashed run never leaves a half-formed one.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pickPorts, portsOf, urlOf } from './ports.ts';
import { alive, readPid, runDaemonizing, startFailure, stopPid, waitUntil } from './process.ts';
import { redisCommand, redisServerArgs } from './redis.ts';
import { STATE_DIR, withLock } from './state.ts';
import { startOnce } from './lifecycle.ts';

const DIR = join(STATE_DIR, 'redis-cluster');
const START_TIMEOUT_MS = 20_000;
const SLOTS = 16_384;

const nodeDir = (port: number) => join(DIR, String(port));
const pidfileOf = (port: number) => join(nodeDir(port), 'redis.pid');
const logOf = (port: number) => join(nodeDir(port), 'redis.log');

export function url(): string {
  return urlOf('redis-cluster');
}

export function running(): boolean {
  return portsOf('redis-cluster').every((port) => alive(pidfileOf(port), 'redis-server'));
}

export function pids(): number[] {
  return running() ? portsOf('redis-cluster').map((port) => readPid(pidfileOf(port))!) : [];
}

async function stopNodes(ports: number[], log: (line: string) => void): Promise<void> {
  for (const port of ports) await stopPid(`redis-cluster node ${port}`, pidfileOf(port), 'redis-server', log);
}

/**
 * Forms the cluster as `redis-cli --cluster create --cluster-replicas 0` does: the slots split
 * evenly over the masters, a distinct config epoch each (before they meet, so none has to be
 * resolved), then every node meets the first.
 */
async function form(ports: number[]): Promise<void> {
  for (const [i, port] of ports.entries()) {
    await redisCommand(port, 'CLUSTER', 'ADDSLOTSRANGE', Math.floor((SLOTS * i) / ports.length), Math.floor((SLOTS * (i + 1)) / ports.length) - 1);
    await redisCommand(port, 'CLUSTER', 'SET-CONFIG-EPOCH', i + 1);
  }
  for (const port of ports.slice(1)) await redisCommand(ports[0]!, 'CLUSTER', 'MEET', '127.0.0.1', port);
}

/** Every node sees every master and all slots served. */
async function clusterOk(ports: number[]): Promise<boolean> {
  for (const port of ports) {
    const info = String(await redisCommand(port, 'CLUSTER', 'INFO'));
    if (!info.includes('cluster_state:ok') || !info.includes(`cluster_known_nodes:${ports.length}`)) return false;
  }
  return true;
}

/** Starts and forms the cluster unless it runs; true when this call started it. */
export function start(log: (line: string) => void = console.log): Promise<boolean> {
  return startOnce('redis-cluster', { running, url, pids }, log, async () => {
    // Some node may still run from a half-failed start: stop them all, so the cluster is formed afresh.
    await stopNodes(portsOf('redis-cluster'), () => undefined);
    const ports = pickPorts('redis-cluster', log);
    const logs = ports.map((port): [string, number] => [logOf(port), 0]);
    for (const port of ports) {
      rmSync(nodeDir(port), { recursive: true, force: true });
      mkdirSync(nodeDir(port), { recursive: true });
      const args = [
        ...redisServerArgs(port, nodeDir(port), pidfileOf(port), logOf(port)),
        '--cluster-enabled', 'yes', '--cluster-config-file', join(nodeDir(port), 'nodes.conf'), '--cluster-node-timeout', '5000',
      ];
      if ((await runDaemonizing('redis-server', args, logOf(port))) !== 0) throw startFailure(`redis-cluster: node ${port} failed to start`, logs);
    }
    const answering = async () => (await Promise.all(ports.map((port) => redisCommand(port, 'PING')))).every((reply) => reply === 'PONG');
    if (!(await waitUntil(answering, START_TIMEOUT_MS))) throw startFailure(`redis-cluster: no PONG from every node within ${START_TIMEOUT_MS / 1000} s`, logs);
    await form(ports).catch((err: unknown) => {
      throw startFailure(`redis-cluster: forming the cluster failed: ${(err as Error).message}`, logs);
    });
    if (!(await waitUntil(async () => (await clusterOk(ports)) && running(), START_TIMEOUT_MS))) {
      throw startFailure(`redis-cluster: cluster_state not ok within ${START_TIMEOUT_MS / 1000} s`, logs);
    }
    log(`redis-cluster: ready at ${url()} (${ports.length} masters, pids ${pids().join(' ')})`);
  });
}

export function stop(log: (line: string) => void = console.log): Promise<void> {
  return withLock(() => stopNodes(portsOf('redis-cluster'), log));
}
