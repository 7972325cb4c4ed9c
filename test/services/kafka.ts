/**
 * Our own Kafka: Apache Kafka 4.x from Maven Central (version in scripts/services/kafka/pom.xml,
 * jars in .services/kafka/libs), KRaft, one broker+controller node on 127.0.0.1 run with plain
 * `java`. Topics and committed offsets survive a restart: the data stays in .services/kafka/data.
 */
import { execFile } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { dropKafkajsNegativeTimeoutWarning } from '../../lib/kafka/client.ts';
import { kafkaJavaOptions, writeKafkaConfig, type KafkaLayout } from './kafka-config.ts';
import { pickPorts, urlOf } from './ports.ts';
import { alive, logSince, logSize, readPid, spawnDetached, startFailure, stopPid, waitUntil } from './process.ts';
import { STATE_DIR, processExists, withLock } from './state.ts';
import { startOnce } from './lifecycle.ts';

const DIR = join(STATE_DIR, 'kafka');
const LAYOUT: KafkaLayout = { dir: DIR, config: join(DIR, 'server.properties'), dataDir: join(DIR, 'data'), logDir: join(DIR, 'logs') };
const LIBS = join(DIR, 'libs');
const PIDFILE = join(DIR, 'kafka.pid');
const SERVER_LOG = join(LAYOUT.logDir, 'server.log');
const JVM_OUT = join(LAYOUT.logDir, 'kafka.out');
const STORAGE_LOG = join(LAYOUT.logDir, 'storage-tool.log');
const START_TIMEOUT_MS = 150_000;
/** Tells our broker from any other java process that took over a stale pidfile's pid. */
const PATTERN = `kafka.Kafka ${LAYOUT.config}`;

export function url(): string {
  return urlOf('kafka');
}

export function running(): boolean {
  return alive(PIDFILE, PATTERN);
}

export function pids(): number[] {
  return running() ? [readPid(PIDFILE)!] : [];
}

/** A class of the broker's jars run with `java` (the storage tool), its stdout; stderr goes to storage-tool.log. */
async function runJava(mainClass: string, args: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await promisify(execFile)('java', [...kafkaJavaOptions(LAYOUT), '-cp', `${LIBS}/*`, mainClass, ...args], { timeout: 120_000 });
    appendFileSync(STORAGE_LOG, stderr);
    return stdout;
  } catch (err) {
    const { stdout = '', stderr = '' } = err as { stdout?: string; stderr?: string };
    appendFileSync(STORAGE_LOG, `${stdout}${stderr}`);
    throw startFailure(`kafka: ${mainClass} ${args[0]} failed`, [[STORAGE_LOG, 0]]);
  }
}

/**
 * KRaft storage is formatted once, with a cluster id, before the first start; never again (it would
 * refuse, and wiping would lose topics).
 */
async function formatStorage(log: (line: string) => void): Promise<void> {
  if (existsSync(join(LAYOUT.dataDir, 'meta.properties'))) return;
  const idFile = join(DIR, 'cluster.id');
  if (!existsSync(idFile)) writeFileSync(idFile, (await runJava('kafka.tools.StorageTool', ['random-uuid'])).trim());
  const clusterId = readFileSync(idFile, 'utf8').trim();
  log(`kafka: formatting KRaft storage in ${LAYOUT.dataDir} (cluster id ${clusterId})`);
  await runJava('kafka.tools.StorageTool', ['format', '-t', clusterId, '-c', LAYOUT.config, '--ignore-formatted']);
}

/**
 * A real metadata round-trip through kafkajs (a controller elected, topics listed) proves clients
 * can use the broker, not just that its port is open. Throws what went wrong.
 */
async function metadataOk(): Promise<boolean> {
  dropKafkajsNegativeTimeoutWarning();
  const kafka = new Kafka({
    clientId: 'test-services', brokers: [url()], logLevel: logLevel.NOTHING, connectionTimeout: 3_000, requestTimeout: 5_000, retry: { retries: 1 },
  });
  const admin = kafka.admin();
  try {
    await admin.connect();
    const cluster = await admin.describeCluster();
    if (cluster.controller === null || cluster.controller === undefined) throw new Error('no controller yet');
    await admin.listTopics();
    return true;
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

/** Starts our broker unless it runs; true when this call started it. */
export function start(log: (line: string) => void = console.log): Promise<boolean> {
  return startOnce('kafka', { running, url, pids }, log, async () => {
    const [port, controllerPort] = pickPorts('kafka', log) as [number, number];
    writeKafkaConfig(LAYOUT, port, controllerPort);
    await formatStorage(log);
    // Only what this start writes to server.log counts (it is appended to across restarts).
    const serverLogFrom = logSize(SERVER_LOG);
    rmSync(PIDFILE, { force: true });
    const pid = spawnDetached('java', [...kafkaJavaOptions(LAYOUT), '-cp', `${LIBS}/*`, 'kafka.Kafka', LAYOUT.config], JVM_OUT);
    writeFileSync(PIDFILE, String(pid));
    let started = false;
    let lastProblem = '';
    const ready = async () => {
      started ||= logSince(SERVER_LOG, serverLogFrom, Infinity).includes('Kafka Server started');
      if (!started || !running()) return false;
      return metadataOk().catch((err: unknown) => {
        lastProblem = (err as Error).message;
        return false;
      });
    };
    if (!(await waitUntil(ready, START_TIMEOUT_MS, 1_000, () => !processExists(pid)))) {
      const exited = !processExists(pid);
      if (exited) rmSync(PIDFILE, { force: true });
      const why = exited
        ? 'the broker process exited during startup'
        : `not ready within ${START_TIMEOUT_MS / 1000} s (still running as pid ${pid}; stop it with: npm run services -- down kafka)`;
      throw startFailure(`kafka: ${why}${lastProblem ? `; last readiness probe: ${lastProblem}` : ''}`, [[JVM_OUT, 0], [SERVER_LOG, serverLogFrom]]);
    }
    log(`kafka: ready at ${url()} (KRaft, controller 127.0.0.1:${controllerPort}, pid ${pid})`);
  });
}

export function stop(log: (line: string) => void = console.log): Promise<void> {
  return withLock(() => stopPid('kafka', PIDFILE, PATTERN, log));
}
