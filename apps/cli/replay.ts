/**
 * npm run replay -- --input <file|-> [--output <file|->] [--diff]
 * npm run replay -- --from-kafka --since <ISO> [--until <ISO>] [--output <file|->] [--diff]
 *
 * Replays carrier_poll.v1 records through today's mapping rules (contracts.md "Replay"): each line
 * of output is the tracking record the API would answer, with insights as of the poll's polled_at.
 * --diff instead compares the current rules' events with those stored in ClickHouse and reports
 * what would change per carrier and status; nothing is written anywhere.
 * Exit status 1 when any record was invalid, 2 on a usage or configuration error.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { PassThrough, type Readable } from 'node:stream';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import cliProgress from 'cli-progress';
import { createClickHouseClient, resolveTarget, storedEventsFor } from '../../lib/clickhouse/index.ts';
import { createKafka } from '../../lib/kafka/client.ts';
import { readPollWindow } from '../../lib/kafka/read-window.ts';
import { loadProduct } from '../../lib/product/index.ts';
import { diffEvents, formatDiff, type MappedEvent } from '../../lib/replay/diff.ts';
import { replayLine, replayStream, type ReplayContext, type ReplayTotals } from '../../lib/replay/index.ts';

const USAGE = [
  'usage: npm run replay -- --input <file|-> [--output <file|->] [--diff]',
  '       npm run replay -- --from-kafka --since <ISO> [--until <ISO>] [--output <file|->] [--diff]',
].join('\n');

function fail(message: string): never {
  process.stderr.write(`replay: ${message}\n${USAGE}\n`);
  process.exit(2);
}

function parseTime(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) fail(`${name} must be an ISO 8601 date-time, got "${value}"`);
  return ms;
}

/** The polls to replay: a file, standard input, or a window of the Kafka topic (streamed). */
function openSource(args: { input?: string; 'from-kafka': boolean; since?: string; until?: string }, onDone: (err?: unknown) => void): Readable {
  if (!args['from-kafka']) {
    const input = args.input === '-' ? process.stdin : createReadStream(args.input!);
    input.on('error', (err: Error) => fail(`cannot read ${args.input}: ${err.message}`));
    input.on('end', () => onDone());
    return input;
  }
  const brokers = process.env.KAFKA_BROKERS;
  if (!brokers) fail('--from-kafka needs KAFKA_BROKERS');
  const sinceMs = parseTime(args.since, '--since');
  if (sinceMs === undefined) fail('--from-kafka needs --since');
  const untilMs = parseTime(args.until, '--until');
  const stream = new PassThrough();
  const kafka = createKafka({ brokers, clientId: 'tracking-replay', log: () => {} });
  readPollWindow(kafka, { sinceMs, untilMs }, async (value) => {
    if (!stream.write(value + '\n')) await once(stream, 'drain');
  }).then(() => { stream.end(); onDone(); }, (err: unknown) => { stream.destroy(err as Error); onDone(err); });
  return stream;
}

function progressBar(enabled: boolean) {
  if (!enabled) return null;
  const bar = new cliProgress.SingleBar({ format: 'replay | {value} polls | {records} records | {invalid} invalid', stream: process.stderr }, cliProgress.Presets.shades_classic);
  bar.start(0, 0, { records: 0, invalid: 0 });
  return bar;
}

/** --diff: the current rules' events for every replayed poll, compared with ClickHouse. */
async function runDiff(source: Readable, ctx: ReplayContext, output: NodeJS.WritableStream): Promise<number> {
  const target = resolveTarget(process.env.CLICKHOUSE_URL ?? fail('--diff needs CLICKHOUSE_URL'), process.env.CLICKHOUSE_DATABASE);
  const fresh = new Map<string, MappedEvent>();
  let invalid = 0;
  let lineNumber = 0;
  for await (const line of createInterface({ input: source, crlfDelay: Infinity })) {
    lineNumber++;
    if (!line.trim()) continue;
    const outcome = replayLine(line, ctx);
    if (outcome.kind === 'invalid') {
      invalid++;
      process.stderr.write(`replay: line ${lineNumber}: ${outcome.message}\n`);
    } else if (outcome.kind === 'record') {
      const record = outcome.output as { carrier: string; awb: string; events: Omit<MappedEvent, 'carrier' | 'awb'>[] };
      for (const e of record.events) {
        fresh.set(e.event_id, { event_id: e.event_id, carrier: record.carrier, awb: record.awb, status: e.status, code: e.code, reason_code: e.reason_code });
      }
    }
  }
  const client = createClickHouseClient(target);
  try {
    const shipments = [...new Map([...fresh.values()].map((e) => [`${e.carrier}:${e.awb}`, { carrier: e.carrier, awb: e.awb }])).values()];
    const stored = await storedEventsFor(client, shipments);
    const report = diffEvents(stored, [...fresh.values()]);
    output.write(JSON.stringify({ mapping_version: ctx.rules.mappingVersion, ...report }) + '\n');
    process.stderr.write(`${formatDiff(report)}\n`);
  } finally {
    await client.close();
  }
  return invalid;
}

async function main(): Promise<void> {
  let args;
  try {
    args = parseArgs({
      options: {
        input: { type: 'string' },
        output: { type: 'string', default: '-' },
        'from-kafka': { type: 'boolean', default: false },
        since: { type: 'string' },
        until: { type: 'string' },
        diff: { type: 'boolean', default: false },
      },
      strict: true,
    }).values;
  } catch (err) {
    fail((err as Error).message);
  }
  if (!args['from-kafka'] && !args.input) fail('--input (or --from-kafka) is required');
  if (args['from-kafka'] && args.input) fail('use either --input or --from-kafka, not both');

  // CONFIG_DIR (as every app): replay --diff is how a changed copy of the mapping rules is tried out.
  const product = loadProduct(process.env.CONFIG_DIR || undefined);
  const ctx: ReplayContext = { rules: product.rules, resolveCarrier: (n) => product.registry.resolve(n) };
  let sourceError: unknown = null;
  const source = openSource(args, (err) => { if (err) sourceError = err; });
  const output = args.output === '-' ? process.stdout : createWriteStream(args.output!);

  if (args.diff) {
    const invalid = await runDiff(source, ctx, output);
    if (output !== process.stdout) await new Promise<void>((resolve) => output.end(resolve));
    process.exitCode = invalid > 0 ? 1 : 0;
    return;
  }

  // A progress bar only where a person is watching, never mixed into piped output.
  const bar = progressBar(process.stderr.isTTY && args.output !== '-');
  const totals: ReplayTotals = await replayStream(source, output, ctx, {
    onInvalidLine(lineNumber, message) {
      process.stderr.write(`replay: line ${lineNumber}: ${message}\n`);
    },
    onProgress(t) {
      bar?.setTotal(t.lines);
      bar?.update(t.lines, { records: t.records, invalid: t.invalid });
    },
  });
  bar?.stop();
  if (output !== process.stdout) await new Promise<void>((resolve) => output.end(resolve));
  if (sourceError) throw sourceError;
  process.stderr.write(
    `replay: ${totals.lines} polls, ${totals.records} records, ${totals.notFound} not found, ` +
      `${totals.carrierErrors} carrier errors, ${totals.invalid} invalid lines (mapping ${product.rules.mappingVersion})\n`,
  );
  process.exitCode = totals.invalid > 0 ? 1 : 0;
}

main().catch((err: unknown) => {
  process.stderr.write(`replay: ${(err as Error).message}\n`);
  process.exit(2);
});
