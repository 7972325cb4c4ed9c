/**
 * A Kafka broker of a test's own: a fresh KRaft node (new cluster id, empty data) on free ports and
 * in a temporary folder, run with the jars the shared broker uses (.services/kafka/libs, installed
 * by the services' start), and stopped and removed by the test. For what only a new broker shows
 * (its coordinators still loading when the first clients arrive); the shared broker is never touched.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { dropKafkajsNegativeTimeoutWarning } from '../../lib/kafka/client.ts';
import { freePort } from '../../lib/testutil/ports.ts';
import { kafkaJavaOptions, writeKafkaConfig, type KafkaLayout } from './kafka-config.ts';
import { STATE_DIR } from './state.ts';

const LIBS = join(STATE_DIR, 'kafka', 'libs');
const START_BOUND_MS = 150_000;

export interface ScratchKafka {
  brokers: string;
  stop(): Promise<void>;
}

async function ready(brokers: string): Promise<boolean> {
  dropKafkajsNegativeTimeoutWarning();
  const admin = new Kafka({ clientId: 'scratch-kafka', brokers: [brokers], logLevel: logLevel.NOTHING, connectionTimeout: 2_000, retry: { retries: 0 } }).admin();
  try {
    await admin.connect();
    const cluster = await admin.describeCluster();
    return cluster.controller !== null && cluster.controller !== undefined;
  } catch {
    return false;
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

/** Formats and starts a new broker; resolves once it answers metadata with a controller. */
export async function startScratchKafka(): Promise<ScratchKafka> {
  if (!existsSync(LIBS)) throw new Error(`no Kafka jars at ${LIBS}: the services' start installs them (npm run services -- up)`);
  const dir = mkdtempSync(join(tmpdir(), 'scratch-kafka-'));
  const layout: KafkaLayout = { dir, config: join(dir, 'server.properties'), dataDir: join(dir, 'data'), logDir: join(dir, 'logs') };
  const [port, controllerPort] = [await freePort(), await freePort()];
  writeKafkaConfig(layout, port, controllerPort);
  const java = [...kafkaJavaOptions(layout), '-cp', `${LIBS}/*`];
  // A new cluster: an id from Kafka's own tool (a base64 UUID), then the storage formatted with it.
  const run = promisify(execFile);
  const { stdout: clusterId } = await run('java', [...java, 'kafka.tools.StorageTool', 'random-uuid'], { timeout: 120_000 });
  await run('java', [...java, 'kafka.tools.StorageTool', 'format', '-t', clusterId.trim(), '-c', layout.config], { timeout: 120_000 });
  const child = spawn('java', [...java, 'kafka.Kafka', layout.config], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const brokers = `127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const bound = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(bound);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + START_BOUND_MS;
  while (!(await ready(brokers))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      const log = existsSync(join(layout.logDir, 'server.log')) ? readFileSync(join(layout.logDir, 'server.log'), 'utf8').slice(-3_000) : '';
      await stop();
      throw new Error(`scratch Kafka did not start (${child.exitCode === null ? 'timeout' : `exit ${child.exitCode}`}):\n${log}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return { brokers, stop };
}
