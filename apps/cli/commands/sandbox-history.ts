/**
 * `sandbox history --shipments N --days D --seed S [--out F.jsonl] [--into-stores [--topic T]]`: a generated
 * history of the simulated network (sandbox.md "The network model and its history") as the raw-poll
 * log (`carrier_poll.v1`, one JSON line per poll, each journey's polls oldest first). `--into-stores`
 * sends the same polls, for test mode (trk_test_ keys), into the configured stores: Kafka's
 * tracking.carrier-polls.v1 when KAFKA_BROKERS is set (a running normalizer fills ClickHouse), else
 * the embedded log DATA_DIR/polls.ndjson (read by `npm start` when it starts). Progress on stderr.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { parseArgs } from 'node:util';
import type { PollBus } from '../../../lib/bus/index.ts';
import { loadCalendar } from '../../../lib/calendar/index.ts';
import { createKafka } from '../../../lib/kafka/client.ts';
import { KafkaBus } from '../../../lib/kafka/kafka-bus.ts';
import { POLLS_TOPIC } from '../../../lib/kafka/topics.ts';
import { loadNetworkConfig } from '../../../lib/network/config.ts';
import { loadPlaces } from '../../../lib/places/index.ts';
import { historyPolls } from '../../../lib/sandbox/history.ts';
import { createProgress } from '../../../lib/progress/index.ts';
import { PollLog } from '../../../lib/store/poll-log.ts';
import { DAY_MS } from '../../../lib/time/index.ts';
import type { RunCommand } from './command.ts';
import type { CliIo } from './io.ts';

export const SANDBOX_HISTORY_USAGE = `Usage: npm run cli -- sandbox history --shipments N [--days D] [--seed S] [--end ISO] [--out F.jsonl] [--into-stores]

Generates the simulated network's history as a raw-poll log (carrier_poll.v1, several polls a journey).
  --shipments N   journeys to generate
  --days D        bookings spread over the D days before --end (default 90)
  --seed S        the same seed gives the same log (default 1)
  --end ISO       when the history ends (default now)
  --out F.jsonl   write the polls there, one JSON line each ("-": stdout)
  --into-stores   send the polls (test mode) to Kafka when KAFKA_BROKERS is set, else to DATA_DIR/polls.ndjson
  --topic T       with Kafka: the raw-poll topic (default tracking.carrier-polls.v1; another must exist),
                  for a normalizer started on its own topic
At least one of --out and --into-stores.
`;

/** How often the bus is drained while generating: the queue of a million journeys would not fit. */
const FLUSH_EVERY = 5_000;

function wholeNumber(value: string | undefined, name: string, fallback?: number): number {
  if (value === undefined) {
    if (fallback === undefined) throw new Error(`--${name} is required`);
    return fallback;
  }
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) throw new Error(`--${name} must be a whole number, got "${value}"`);
  return Number(value);
}

async function write(stream: WriteStream | NodeJS.WriteStream, text: string): Promise<void> {
  if (!stream.write(text)) await once(stream, 'drain');
}

export interface HistorySummary { journeys: number; polls: number; delivered: number; rto: number; lost: number; open: number; seconds: number }

/** Runs `sandbox history …`; returns the exit code (0 ok, 1 failure, 2 usage error). */
export async function runSandboxHistory(argv: string[], io: CliIo): Promise<number> {
  let options;
  try {
    const { values } = parseArgs({
      args: argv, strict: true, allowPositionals: false,
      options: {
        shipments: { type: 'string' }, days: { type: 'string' }, seed: { type: 'string' }, end: { type: 'string' }, out: { type: 'string' },
        'into-stores': { type: 'boolean' }, topic: { type: 'string' }, help: { type: 'boolean', short: 'h' },
      },
    });
    if (values.help) {
      io.stdout(SANDBOX_HISTORY_USAGE);
      return 0;
    }
    const end = values.end === undefined ? Date.now() : Date.parse(values.end);
    if (Number.isNaN(end)) throw new Error(`--end must be an ISO date-time, got "${values.end}"`);
    options = {
      shipments: wholeNumber(values.shipments, 'shipments'),
      days: Math.max(1, wholeNumber(values.days, 'days', 90)),
      seed: wholeNumber(values.seed, 'seed', 1),
      endMs: end,
      out: values.out,
      intoStores: values['into-stores'] === true,
      topic: values.topic,
    };
    if (!options.out && !options.intoStores) throw new Error('give --out and/or --into-stores');
    if (options.topic !== undefined && !(options.intoStores && io.env.KAFKA_BROKERS)) throw new Error('--topic needs --into-stores and KAFKA_BROKERS');
  } catch (err) {
    io.stderr(`error: ${(err as Error).message}\n\n${SANDBOX_HISTORY_USAGE}`);
    return 2;
  }
  const env = io.env;
  const started = performance.now();
  const file = options.out === undefined ? null : options.out === '-' ? process.stdout : createWriteStream(options.out);
  let bus: PollBus | null = null;
  let log: PollLog | null = null;
  if (options.intoStores) {
    if (env.KAFKA_BROKERS) {
      bus = await KafkaBus.open({
        kafka: createKafka({ brokers: env.KAFKA_BROKERS, clientId: 'tracking-cli-history' }), dataDir: env.DATA_DIR ?? './data', topic: options.topic,
      });
    } else {
      log = new PollLog(env.DATA_DIR ?? './data');
    }
  }
  // The CLI tools' one progress report: a bar on a terminal, else a plain line every 10 s.
  const progress = createProgress({ label: 'sandbox history', unit: 'journeys', enabled: true });
  progress.phase('generate', options.shipments);
  const summary: HistorySummary = { journeys: 0, polls: 0, delivered: 0, rto: 0, lost: 0, open: 0, seconds: 0 };
  try {
    for await (const { journey, polls } of historyPolls({
      config: loadNetworkConfig(env.CONFIG_DIR), calendar: loadCalendar(env.CONFIG_DIR), places: loadPlaces(env.CONFIG_DIR),
      shipments: options.shipments, days: options.days, seed: options.seed, endMs: options.endMs,
    })) {
      summary.journeys++;
      summary.polls += polls.length;
      if (journey.closedAt >= options.endMs) summary.open++;
      else summary[journey.outcome]++;
      if (file && polls.length) await write(file, polls.map((p) => JSON.stringify(p)).join('\n') + '\n');
      for (const poll of polls) {
        bus?.publish(poll, 'test');
        log?.append({ poll, mode: 'test' });
      }
      if (summary.journeys % FLUSH_EVERY === 0) {
        await bus?.flush();
        await log?.flush();
        progress.update(summary.journeys);
      }
    }
    await bus?.flush();
    await log?.flush();
    progress.update(summary.journeys);
  } catch (err) {
    io.stderr(`error: ${(err as Error).message}\n`);
    return 1;
  } finally {
    progress.stop();
    await bus?.close();
    if (file && file !== process.stdout) await new Promise<void>((resolve) => (file as WriteStream).end(resolve));
  }
  summary.seconds = Math.round((performance.now() - started) / 10) / 100;
  const where = [
    options.out && `${options.out}`,
    options.intoStores && (env.KAFKA_BROKERS ? `Kafka (${env.KAFKA_BROKERS}, ${options.topic ?? POLLS_TOPIC})` : `${env.DATA_DIR ?? './data'}/polls.ndjson`),
  ].filter(Boolean).join(' and ');
  io.stderr(`${summary.journeys} journeys (${summary.delivered} delivered, ${summary.rto} returned, ${summary.lost} lost, ${summary.open} still open ` +
    `at the end), ${summary.polls} polls → ${where} in ${summary.seconds} s (${Math.round(summary.journeys / Math.max(summary.seconds, 0.001))} ` +
    `journeys/s); history ${new Date(options.endMs - options.days * DAY_MS).toISOString()} → ${new Date(options.endMs).toISOString()}\n`);
  return 0;
}

export const sandboxHistoryCommand: RunCommand = { words: ['sandbox', 'history'], run: runSandboxHistory };
