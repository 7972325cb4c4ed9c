/**
 * `store move`: the embedded store under DATA_DIR carried into Redis (keys with their counters,
 * payments, idempotency answers, push's and the analyzer's state) and its raw-poll log into Kafka,
 * so a service grown out of the embedded default keeps every key, count, watch, endpoint secret,
 * payment and analysis. The embedded API must be stopped first (one process per DATA_DIR).
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { EmbeddedAccessStore, RedisAccessStore } from '../access/index.ts';
import { EmbeddedPaymentStore, RedisPaymentStore } from '../billing/index.ts';
import type { Plans } from '../config/index.ts';
import { EmbeddedIdempotencyStore, IDEMPOTENCY_TTL_MS, RedisIdempotencyStore } from '../idempotency/index.ts';
import { createKafka } from '../kafka/client.ts';
import { EmbeddedKv, RedisKv } from '../kv/index.ts';
import { redactUrl } from '../process/banner.ts';
import { connectRedis, type RedisClient } from '../redis/index.ts';
import { embeddedStoreDirs, writeMovedMarker } from './embedded-state.ts';
import { copyKv, type KvCopied } from './kv-copy.ts';
import { sendPollLog } from './polls.ts';
import { firstKeyUnder, moveKeys } from './target.ts';

export interface MoveOptions {
  dataDir: string;
  redisUrl: string;
  /** Unset: the raw-poll log stays (said in the summary). */
  kafkaBrokers: string | undefined;
  plans: Plans;
  /** Redis key prefix of the apps (`trk:`; tests use their own). */
  namespace: string;
  /** The raw-poll topic (tracking.carrier-polls.v1). */
  topic: string;
  /** Write into a target that holds keys already (a move that stopped part way, or on purpose). */
  force: boolean;
  clock?: () => number;
  /** Progress lines (one per part). */
  log?: (line: string) => void;
}

export interface MoveSummary {
  outcome: 'moved' | 'already_moved' | 'refused';
  /** Why it was refused, or when it was moved before. */
  reason?: string;
  keys: number;
  counted_lookups: number;
  payments: number;
  link_attempts: number;
  idempotency_answers: number;
  push: KvCopied;
  polls: { sent: number; skipped: number; damaged: number } | null;
}

const nothing = (): Omit<MoveSummary, 'outcome'> => ({
  keys: 0, counted_lookups: 0, payments: 0, link_attempts: 0, idempotency_answers: 0, push: { documents: 0, sets: 0, schedules: 0, lists: 0 }, polls: null,
});

export async function moveStore(options: MoveOptions): Promise<MoveSummary> {
  const clock = options.clock ?? Date.now;
  const log = options.log ?? (() => {});
  const dataDir = resolve(options.dataDir);
  if (!existsSync(dataDir)) return { outcome: 'refused', reason: `DATA_DIR ${dataDir} does not exist: nothing to move`, ...nothing() };
  const ns = options.namespace;
  const marks = moveKeys(ns);
  const redis = connectRedis(options.redisUrl, { maxRetriesPerRequest: 2 });
  try {
    const done = await redis.get(marks.done);
    const before = done ? JSON.parse(done) as { data_dir: string; moved_at: string; polls_moved: boolean } : null;
    const movedHere = before !== null && before.data_dir === dataDir && !options.force;
    if (movedHere && (before.polls_moved || !options.kafkaBrokers)) {
      return { outcome: 'already_moved', reason: `${dataDir} was moved into this Redis at ${before.moved_at}`, ...nothing() };
    }
    // Moved before without Kafka: only the raw-poll log is left to send.
    const redisPartsDone = movedHere;
    const occupied = redisPartsDone ? null : await firstKeyUnder(redis, ns);
    if (occupied && !options.force) {
      const partly = (await redis.get(marks.pollsSent)) !== null && !before;
      return {
        outcome: 'refused',
        reason: partly
          ? `a previous move into this Redis did not finish (${occupied} is there): run it again with --force to complete it`
          : `Redis already holds keys under ${ns} (${occupied}): a move would overwrite what they hold; --force writes anyway`,
        ...nothing(),
      };
    }
    const summary: MoveSummary = { outcome: 'moved', ...nothing() };

    if (!redisPartsDone) await moveRedisParts(options, redis, summary, clock, log);

    if (options.kafkaBrokers) {
      const alreadySent = Number(await redis.get(marks.pollsSent) ?? 0);
      summary.polls = await sendPollLog({
        kafka: createKafka({ brokers: options.kafkaBrokers, clientId: 'tracking-cli-store-move' }),
        topic: options.topic, dataDir, alreadySent,
        onSent: async (sent) => { await redis.set(marks.pollsSent, String(sent)); },
      });
      const { sent, skipped, damaged } = summary.polls;
      log(`raw-poll log: ${sent} polls sent to ${options.topic}${skipped ? ` (${skipped} sent by an earlier run)` : ''}` +
        `${damaged ? `, ${damaged} damaged lines skipped` : ''}`);
    } else {
      log('raw-poll log: left in DATA_DIR (KAFKA_BROKERS not set); run the move again with it to send the history');
    }

    const movedAt = new Date(clock()).toISOString();
    await redis.set(marks.done, JSON.stringify({ data_dir: dataDir, moved_at: movedAt, polls_moved: summary.polls !== null, summary }));
    writeMovedMarker(dataDir, {
      moved_at: movedAt, redis: redactUrl(options.redisUrl), kafka: options.kafkaBrokers ?? null, namespace: ns,
      topic: options.kafkaBrokers ? options.topic : null, polls_moved: summary.polls !== null,
    });
    return summary;
  } finally {
    redis.disconnect();
  }
}

/** Keys, payments, idempotency answers and push's Kv, each store read from DATA_DIR and written through its Redis twin. */
async function moveRedisParts(options: MoveOptions, redis: RedisClient, summary: MoveSummary, clock: () => number, log: (line: string) => void): Promise<void> {
  const ns = options.namespace;
  const dirs = embeddedStoreDirs(resolve(options.dataDir));
  // Keys: record, counters of the current period and day, payments applied, first-trial e-mail.
  if (existsSync(dirs.access)) {
    const from = new EmbeddedAccessStore({ plans: options.plans, dir: dirs.access });
    const to = new RedisAccessStore({ plans: options.plans, redis, namespace: `${ns}access:` });
    try {
      for (const transfer of await from.transfers()) {
        await to.restoreKey(transfer);
        summary.keys++;
        summary.counted_lookups += transfer.counter?.period_used ?? 0;
      }
    } finally {
      await from.close();
    }
    log(`keys: ${summary.keys} (${summary.counted_lookups} lookups counted in their periods)`);
  }

  if (existsSync(dirs.payments)) {
    const from = new EmbeddedPaymentStore(dirs.payments);
    const to = new RedisPaymentStore(redis, `${ns}payments:`);
    try {
      const { payments, attempts } = from.dump();
      for (const payment of payments) {
        // The claim writes the record and the key's index; a settled one is then written whole.
        const claim = await to.claim(payment, 0);
        if (claim.kind === 'claimed' && payment.state === 'settled') await to.settle(payment);
        summary.payments++;
      }
      for (const attempt of attempts) await to.saveAttempt(attempt);
      summary.link_attempts = attempts.length;
    } finally {
      await from.close();
    }
    log(`payments: ${summary.payments}, payment links: ${summary.link_attempts}`);
  }

  if (existsSync(dirs.idempotency)) {
    const from = new EmbeddedIdempotencyStore(dirs.idempotency, clock);
    const to = new RedisIdempotencyStore(redis, `${ns}idempotency:`);
    try {
      for (const { scope, key, record } of from.dump()) {
        // Kept until the same instant: the record's expiry is its answer time + the TTL.
        await to.complete(scope, key, record.fingerprint, record.answer, record.expires_at - IDEMPOTENCY_TTL_MS);
        summary.idempotency_answers++;
      }
    } finally {
      await from.close();
    }
    log(`idempotency answers: ${summary.idempotency_answers}`);
  }

  // Watches, webhook endpoints with their secrets, pending deliveries, analyses: push's Kv.
  if (existsSync(dirs.push)) {
    const from = new EmbeddedKv(dirs.push, clock);
    try {
      summary.push = await copyKv(from.dump(), new RedisKv(redis, `${ns}push:`), clock());
    } finally {
      await from.close();
    }
    log(`watches, webhooks and analyses: ${summary.push.documents} documents, ${summary.push.sets} sets, ${summary.push.schedules} schedules, ` +
      `${summary.push.lists} lists`);
  }
}
