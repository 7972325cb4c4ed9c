/**
 * The ports of our service instances and the addresses made of them. Each service has candidate
 * port sets: the first is the conventional one, the others exist so that a machine where something
 * else listens there (another checkout's services, say) still gets working services. The set in
 * use is remembered in .services/ports.env. Synchronous and light (no client library), so test
 * helpers can read an address at import time.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { STATE_DIR } from './state.ts';

export type ServiceName = 'redis' | 'redis-cluster' | 'clickhouse' | 'kafka';
export const SERVICE_NAMES: readonly ServiceName[] = ['redis', 'clickhouse', 'kafka', 'redis-cluster'];

const CANDIDATES: Record<ServiceName, number[][]> = {
  redis: [[6380], [16380], [26380]],
  clickhouse: [[8123, 9000], [18123, 19000], [28123, 29000]], // http, native
  kafka: [[9092, 9093], [19092, 19093], [29092, 29093]], // broker, controller
  // Three cluster masters; each also listens on its port + 10000 (the cluster bus).
  'redis-cluster': [[7000, 7001, 7002], [7100, 7101, 7102], [7200, 7201, 7202]],
};

/** ports.env's variables per service (the file keeps the names services.sh gave it). */
const KEYS: Record<ServiceName, string[]> = {
  redis: ['REDIS_PORT'],
  clickhouse: ['CLICKHOUSE_HTTP_PORT', 'CLICKHOUSE_TCP_PORT'],
  kafka: ['KAFKA_PORT', 'KAFKA_CONTROLLER_PORT'],
  'redis-cluster': ['REDIS_CLUSTER_PORTS'],
};

const PORTS_FILE = join(STATE_DIR, 'ports.env');

/** The variable each address is exported as (`npm run services -- env`, the tests' children). */
export const ENV_NAMES: Record<ServiceName, string> = {
  redis: 'REDIS_URL', 'redis-cluster': 'REDIS_CLUSTER_URL', clickhouse: 'CLICKHOUSE_URL', kafka: 'KAFKA_BROKERS',
};

/** A file's text; empty when it does not exist (no ports chosen yet, no IPv6 on this machine). */
function readIfThere(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/**
 * Every TCP port something listens on, on any address, from /proc (what `ss -ltn` reads): a probe
 * that binds 127.0.0.1 would miss a listener on another address, and would be asynchronous.
 */
function listeningPorts(): Set<number> {
  const ports = new Set<number>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readIfThere(file).split('\n').slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (state === '0A' && local) ports.add(Number.parseInt(local.split(':').pop()!, 16)); // 0A: LISTEN
    }
  }
  return ports;
}

/** The ports a set really occupies: a cluster node's bus port too. */
function occupied(name: ServiceName, set: number[]): number[] {
  return name === 'redis-cluster' ? [...set, ...set.map((port) => port + 10_000)] : set;
}

function isFree(name: ServiceName, set: number[], listening = listeningPorts()): boolean {
  return occupied(name, set).every((port) => !listening.has(port));
}

function readPortsFile(): Record<string, string> {
  const values: Record<string, string> = {};
  for (const match of readIfThere(PORTS_FILE).matchAll(/^([A-Z_]+)="?([^"\n]*)"?$/gm)) values[match[1]!] = match[2]!;
  return values;
}

/** The set ports.env remembers for `name`, if any. */
function remembered(name: ServiceName): number[] | null {
  const values = readPortsFile();
  const ports = KEYS[name].flatMap((key) => (values[key] ?? '').split(' ').filter(Boolean).map(Number));
  const size = CANDIDATES[name][0]!.length;
  return ports.length === size && ports.every((port) => Number.isInteger(port) && port > 0) ? ports : null;
}

function remember(name: ServiceName, set: number[]): void {
  const values = readPortsFile();
  if (name === 'redis-cluster') values.REDIS_CLUSTER_PORTS = set.join(' ');
  else KEYS[name].forEach((key, i) => { values[key] = String(set[i]); });
  const lines = Object.values(KEYS).flat().filter((key) => values[key] !== undefined).map((key) => `${key}="${values[key]}"`);
  mkdirSync(STATE_DIR, { recursive: true });
  writeFileSync(`${PORTS_FILE}.tmp`, `# Written by test/services/ports.ts: the ports our own service instances use.\n${lines.join('\n')}\n`);
  renameSync(`${PORTS_FILE}.tmp`, PORTS_FILE);
}

/** The ports `name` uses: the remembered set, else the one a start would pick now (nothing chosen yet). */
export function portsOf(name: ServiceName): number[] {
  const listening = listeningPorts();
  return remembered(name) ?? CANDIDATES[name].find((set) => isFree(name, set, listening)) ?? CANDIDATES[name][0]!;
}

/**
 * Ports for starting `name` (not running), remembered in ports.env. The remembered set when it is
 * free, so an address stays the same across a stop and a start (the outage tests' clients reconnect
 * to it); else the first free candidate set.
 */
export function pickPorts(name: ServiceName, log: (line: string) => void): number[] {
  const listening = listeningPorts();
  const before = remembered(name);
  const chosen = before && isFree(name, before, listening) ? before : CANDIDATES[name].find((set) => isFree(name, set, listening));
  if (!chosen) {
    throw new Error(`${name}: ports ${CANDIDATES[name].map((set) => set.join('+')).join(', ')} are all taken by other processes (see: ss -ltnp)`);
  }
  const wanted = before ?? CANDIDATES[name][0]!;
  if (chosen !== wanted) log(`${name}: port(s) ${wanted.join('+')} already taken by another process; using ${chosen.join('+')} instead`);
  remember(name, chosen);
  return chosen;
}

/** The address clients use: what REDIS_URL, REDIS_CLUSTER_URL, CLICKHOUSE_URL or KAFKA_BROKERS holds. */
export function urlOf(name: ServiceName): string {
  const ports = portsOf(name);
  switch (name) {
    case 'redis':
      return `redis://127.0.0.1:${ports[0]}`;
    case 'redis-cluster':
      return `redis+cluster://${ports.map((port) => `127.0.0.1:${port}`).join(',')}`;
    case 'clickhouse':
      return `http://127.0.0.1:${ports[0]}`;
    case 'kafka':
      return `127.0.0.1:${ports[0]}`;
  }
}

/** The four variables, as `npm run services -- env` prints them and the test run exports them. */
export function serviceEnv(): Record<string, string> {
  const order: ServiceName[] = ['redis', 'kafka', 'clickhouse', 'redis-cluster'];
  return Object.fromEntries(order.map((name) => [ENV_NAMES[name], urlOf(name)]));
}
