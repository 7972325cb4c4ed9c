/**
 * `store move [--force]`: carries the embedded store under DATA_DIR into the REDIS_URL and the
 * raw-poll log into the KAFKA_BROKERS configured (lib/move), for an operator growing out of the
 * embedded default. Stop the embedded start first; then start against the services.
 */
import { parseArgs } from 'node:util';
import { DEFAULT_CONFIG_DIR, loadPlans } from '../../../lib/config/index.ts';
import { POLLS_TOPIC } from '../../../lib/kafka/topics.ts';
import { moveStore } from '../../../lib/move/index.ts';
import { redactUrl } from '../../../lib/process/banner.ts';
import type { RunCommand } from './command.ts';
import type { CliIo } from './io.ts';

export const STORE_MOVE_USAGE = `Usage: npm run cli -- store move [--force]

Moves the embedded store (DATA_DIR, default ./data) into the services: keys with their counts,
payments, Idempotency-Key answers, watches, webhook endpoints with their secrets and analyses into
REDIS_URL, and the raw-poll log into Kafka (KAFKA_BROKERS) for the normalizer, so ClickHouse gets
the history. Stop the embedded start (npm start without services) first.
  --force          write into a Redis that already holds keys of the apps (a move that stopped
                   part way; or on purpose: what the embedded store holds wins)
  --namespace P    Redis key prefix of the apps (default trk:)
  --topic T        the raw-poll topic (default ${POLLS_TOPIC}; another one must exist)
Run twice, the second run does nothing; run after a failure, it continues.
Exit codes: 0 moved (or moved before), 1 refused or failed, 2 usage error.
`;

export async function runStoreMove(argv: string[], io: CliIo): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv, strict: true, allowPositionals: false,
      options: { force: { type: 'boolean' }, namespace: { type: 'string' }, topic: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    }));
  } catch (err) {
    io.stderr(`error: ${(err as Error).message}\n\n${STORE_MOVE_USAGE}`);
    return 2;
  }
  if (values.help) {
    io.stdout(STORE_MOVE_USAGE);
    return 0;
  }
  const env = io.env;
  if (!env.REDIS_URL) {
    io.stderr('error: REDIS_URL is not set: say where the keys go (and KAFKA_BROKERS for the raw-poll log), e.g.\n' +
      '  REDIS_URL=redis://127.0.0.1:6379 KAFKA_BROKERS=127.0.0.1:9092 npm run cli -- store move\n');
    return 1;
  }
  const dataDir = env.DATA_DIR ?? './data';
  io.stderr(`moving ${dataDir} → Redis ${redactUrl(env.REDIS_URL)}${env.KAFKA_BROKERS ? ` and Kafka ${env.KAFKA_BROKERS}` : ''}\n`);
  try {
    const summary = await moveStore({
      dataDir, redisUrl: env.REDIS_URL, kafkaBrokers: env.KAFKA_BROKERS, plans: loadPlans(env.CONFIG_DIR ?? DEFAULT_CONFIG_DIR),
      namespace: values.namespace ?? 'trk:', topic: values.topic ?? POLLS_TOPIC, force: values.force === true,
      log: (line) => io.stderr(`  ${line}\n`),
    });
    if (summary.outcome === 'refused') {
      io.stderr(`error: ${summary.reason}\n`);
      return 1;
    }
    if (summary.outcome === 'already_moved') {
      io.stderr(`nothing to do: ${summary.reason}\n`);
      return 0;
    }
    io.stderr('done. Start against the services now (REDIS_URL, KAFKA_BROKERS, CLICKHOUSE_URL set): every key answers as before.\n');
    io.stdout(`${JSON.stringify(summary, null, 2)}\n`);
    return 0;
  } catch (err) {
    io.stderr(`error: ${(err as Error).message}\n`);
    return 1;
  }
}

export const storeMoveCommand: RunCommand = { words: ['store', 'move'], run: runStoreMove };
