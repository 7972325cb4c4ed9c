/**
 * npm run replay -- <source> [options]   (`--help` lists every option with an example)
 *
 * Replays carrier_poll.v1 records through the current mapping rules (contracts.md "Replay") from a
 * file, the embedded default's log, Kafka or ClickHouse; prints the records, or the diff against
 * what is stored, or applies the new rules to what is stored. Wiring only: the work is in
 * lib/replay (README there). Exit status: 0 done, 1 invalid records / apply declined or
 * interrupted, 2 usage or configuration error.
 */
import { loadEnv, type Env } from '../../lib/config/index.ts';
import { createReadStream, createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { createInterface } from 'node:readline/promises';
import type { Writable } from 'node:stream';
import { createClickHouseClient, resolveTarget, storedEventsFor, type ClickHouseClient, type PollWindow } from '../../lib/clickhouse/index.ts';
import { countPolls } from '../../lib/clickhouse/poll-reader.ts';
import { createKafka } from '../../lib/kafka/client.ts';
import { loadProduct, type Product } from '../../lib/product/index.ts';
import { applyClickHouse, diffClickHouse, type ClickHouseDiff } from '../../lib/replay/clickhouse-run.ts';
import { diffEvents, formatDiff, type DiffReport } from '../../lib/replay/diff.ts';
import { embeddedBaseline, storedEmbeddedEvents, writeAppliedMapping } from '../../lib/replay/embedded.ts';
import { EventSet, mappedEventsOf } from '../../lib/replay/fresh-events.ts';
import { HELP, parseReplayOptions, UsageError, type ReplayOptions } from '../../lib/replay/options.ts';
import { createProgress, type Progress } from '../../lib/replay/progress.ts';
import { replayPoll, type ReplayContext } from '../../lib/replay/replay-line.ts';
import { emptySpan, emptyWindowMessage, storedPollSpan, widenSpan, type PollSpan } from '../../lib/replay/span.ts';
import { clickHouseSource, embeddedSource, inWindow, kafkaSource, lineSource, type PollFilter, type SourceItem } from '../../lib/replay/sources.ts';

/** Exit status 2 with one line. */
class ExitError extends Error {
  readonly status: number;
  constructor(message: string, status = 2) {
    super(message);
    this.status = status;
  }
}

interface Run {
  env: Env;
  options: ReplayOptions;
  product: Product;
  ctx: ReplayContext;
  window: PollWindow;
  filter: PollFilter;
  output: Writable;
  progress: Progress;
  signal: AbortSignal;
  /** Every poll a file or the embedded log held, in the window or not (for an empty window's message). */
  seen: PollSpan;
}

function clickHouse(env: Env, options: ReplayOptions): ClickHouseClient {
  const url = env.CLICKHOUSE_URL;
  if (!url) {
    throw new ExitError(`${options.source === 'clickhouse' ? '--from-clickhouse' : '--diff against ClickHouse'} needs CLICKHOUSE_URL (or --against embedded)`);
  }
  return createClickHouseClient(resolveTarget(url, options.database ?? undefined));
}

function source(run: Run, client: ClickHouseClient | null): AsyncIterable<SourceItem> {
  const { options, ctx } = run;
  const resolve = ctx.resolveCarrier;
  switch (options.source) {
    case 'input': {
      const input = options.input === '-' ? process.stdin : createReadStream(options.input!);
      input.on('error', (err: Error) => { input.destroy(); fatal(`cannot read ${options.input}: ${err.message}`); });
      return lineSource(input, resolve);
    }
    case 'embedded':
      return embeddedSource(options.dataDir, resolve);
    case 'kafka': {
      const brokers = run.env.KAFKA_BROKERS;
      if (!brokers) throw new ExitError('--from-kafka needs KAFKA_BROKERS');
      const kafka = createKafka({ brokers, clientId: 'tracking-replay', log: () => {} });
      return kafkaSource(kafka, { sinceMs: options.sinceMs!, untilMs: options.untilMs ?? undefined }, resolve, options.topic ?? undefined);
    }
    case 'clickhouse':
      return clickHouseSource(client!, run.window);
  }
}

/** Polls of the source within the window; bad lines reported on stderr and counted. */
async function* polls(run: Run, client: ClickHouseClient | null, counts: { invalid: number }) {
  // Kafka and ClickHouse select the window by query (Kafka by message time); files and the log here.
  const localFilter = run.options.source === 'input' || run.options.source === 'embedded';
  for await (const item of source(run, client)) {
    run.signal.throwIfAborted();
    if (item.kind === 'invalid') {
      counts.invalid++;
      process.stderr.write(`replay: line ${item.line}: ${item.message}\n`);
    } else {
      widenSpan(run.seen, item.poll.polled_at);
      if (!localFilter || inWindow(item, run.filter)) yield item;
    }
  }
}

async function writeLine(output: Writable, line: string): Promise<void> {
  if (!output.write(line + '\n')) await once(output, 'drain');
}

/** No --diff/--apply: the record the API would answer for each poll. */
async function runRecords(run: Run): Promise<number> {
  const client = run.options.source === 'clickhouse' ? clickHouse(run.env, run.options) : null;
  const totals = { lines: 0, records: 0, notFound: 0, carrierErrors: 0 };
  const counts = { invalid: 0 };
  try {
    run.progress.phase('records', client ? await countPolls(client, run.window) : null);
    for await (const { poll } of polls(run, client, counts)) {
      totals.lines++;
      const outcome = replayPoll(poll, run.ctx);
      if (outcome.kind === 'record') totals.records++;
      else if (outcome.kind === 'not_found') totals.notFound++;
      else if (outcome.kind === 'carrier_error') totals.carrierErrors++;
      if (outcome.kind !== 'invalid') await writeLine(run.output, JSON.stringify(outcome.output));
      if (totals.lines % 1000 === 0) run.progress.update(totals.lines);
    }
  } finally {
    run.progress.stop();
    await client?.close();
  }
  process.stderr.write(
    `replay: ${totals.lines + counts.invalid} polls, ${totals.records} records, ${totals.notFound} not found, ` +
      `${totals.carrierErrors} carrier errors, ${counts.invalid} invalid lines (mapping ${run.ctx.rules.mappingVersion})\n`,
  );
  return counts.invalid > 0 ? 1 : 0;
}

async function printDiff(run: Run, summary: Record<string, unknown>, report: DiffReport, client: ClickHouseClient | null = null): Promise<void> {
  await writeLine(run.output, JSON.stringify({ mapping_version: run.ctx.rules.mappingVersion, ...summary, ...report }));
  process.stderr.write(`${formatDiff(report)}\n`);
  if (summary.polls === 0) await explainEmptyWindow(run, client);
}

/** An empty window: say where the stored polls are (Kafka's span is not asked: it may hold weeks). */
async function explainEmptyWindow(run: Run, client: ClickHouseClient | null): Promise<void> {
  const { source } = run.options;
  if (source === 'kafka') return;
  const span = source === 'clickhouse' && client ? await storedPollSpan(client, run.filter.carriers) : run.seen;
  const where = source === 'clickhouse'
    ? 'ClickHouse carrier_polls'
    : source === 'embedded' ? `the embedded log (${run.options.dataDir}/polls.ndjson)` : 'the input';
  process.stderr.write(`${emptyWindowMessage(run.filter, span, where)}\n`);
}

async function confirmed(run: Run, question: string): Promise<boolean> {
  if (run.options.yes) return true;
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(`${question} [y/N] `)).trim());
  } finally {
    rl.close();
  }
}

/** --from-clickhouse --diff / --apply: page by page, never the whole window in memory. */
async function runClickHouse(run: Run): Promise<number> {
  const client = clickHouse(run.env, run.options);
  try {
    if (run.options.apply) {
      const [row] = await (await client.query({
        query: "SELECT count() AS c FROM system.tables WHERE database = currentDatabase() AND name = 'replay_checkpoints'",
        format: 'JSONEachRow',
      })).json<{ c: string }>();
      if (Number(row?.c) === 0) throw new ExitError('ClickHouse has no replay_checkpoints table: run `npm run migrate` first');
    }
    const total = await countPolls(client, run.window);
    run.progress.phase('diff', total);
    const diff: ClickHouseDiff = await diffClickHouse(client, {
      window: run.window, rules: run.ctx.rules, signal: run.signal, onProgress: (n) => run.progress.update(n),
    });
    run.progress.stop();
    await printDiff(run, { against: 'clickhouse', polls: diff.polls, invalid_polls: diff.invalid, to_write: diff.toWrite }, diff.report, client);
    const { carrier_polls, events, shipments } = diff.toWrite;
    const mappingVersion = run.ctx.rules.mappingVersion;
    process.stderr.write(
      `rows not yet under mapping ${mappingVersion}: ${carrier_polls} polls, ${events} events, ${shipments} shipments (of ${diff.polls} polls read)\n`,
    );
    if (!run.options.apply) return diff.invalid > 0 ? 1 : 0;
    const database = resolveTarget(run.env.CLICKHOUSE_URL, run.options.database ?? undefined).database;
    if (!(await confirmed(run, `Write these rows to ClickHouse database ${database}?`))) {
      process.stderr.write('replay: apply declined; nothing written\n');
      return 1;
    }
    run.progress.phase('apply', total);
    const result = await applyClickHouse(client, {
      window: run.window, rules: run.ctx.rules, signal: run.signal, onProgress: (n) => run.progress.update(n),
    });
    run.progress.stop();
    if (result.resumedFrom) {
      process.stderr.write(
        `replay: resumed run ${result.runId} after ${result.resumedFrom.carrier} ${result.resumedFrom.awb} (${result.resumedFrom.pages} pages done before)\n`,
      );
    }
    const collapse = result.collapse ? `; merged ${result.collapse.partitions} partitions in ${(result.collapse.durationMs / 1000).toFixed(1)} s` : '';
    process.stderr.write(`replay: applied mapping ${run.ctx.rules.mappingVersion} (run ${result.runId}): wrote ${result.written.carrier_polls} polls, ${result.written.events} events, ${result.written.shipments} shipments rows${collapse}\n`);
    return 0;
  } finally {
    run.progress.stop();
    await client.close();
  }
}

/** --diff (and --apply to the embedded default) from a file, the embedded log or Kafka. */
async function runDiff(run: Run): Promise<number> {
  const { options } = run;
  const fresh = new EventSet();
  const counts = { invalid: 0 };
  let read = 0;
  const client = options.against === 'clickhouse' || options.source === 'clickhouse' ? clickHouse(run.env, options) : null;
  try {
    run.progress.phase('diff', null);
    for await (const { poll } of polls(run, client, counts)) {
      read++;
      fresh.touch(poll.carrier, poll.awb);
      fresh.add(mappedEventsOf(poll, run.ctx.rules));
      if (read % 1000 === 0) run.progress.update(read);
    }
    run.progress.stop();
    let report: DiffReport;
    let summary: Record<string, unknown>;
    if (options.against === 'clickhouse') {
      report = diffEvents(await storedEventsFor(client!, fresh.shipments), fresh.events);
      summary = { against: 'clickhouse', polls: read };
    } else {
      const baseline = embeddedBaseline(options.dataDir, options.baseline ?? undefined);
      process.stderr.write(`replay: stored = the embedded log under ${baseline.source}, mapping ${baseline.rules.mappingVersion}\n`);
      const stored = await storedEmbeddedEvents(options.dataDir, baseline.rules, fresh, run.ctx.resolveCarrier);
      report = diffEvents(stored.events, fresh.events);
      summary = { against: 'embedded', stored_mapping_version: baseline.rules.mappingVersion, polls: read };
    }
    await printDiff(run, summary, report, options.source === 'clickhouse' ? client : null);
    if (!options.apply) return counts.invalid > 0 ? 1 : 0;
    if (!(await confirmed(run, `Record mapping ${run.ctx.rules.mappingVersion} as applied to the embedded default in ${options.dataDir}?`))) {
      process.stderr.write('replay: apply declined; nothing written\n');
      return 1;
    }
    writeAppliedMapping(options.dataDir, {
      mapping_version: run.ctx.rules.mappingVersion, applied_at: new Date().toISOString(), polls: read, mappings: run.product.config.mappings,
    });
    process.stderr.write(
      `replay: mapping ${run.ctx.rules.mappingVersion} recorded as applied in ${options.dataDir}/replay/applied-mapping.json. ` +
        `The embedded default re-derives its state from the log at start: restart it with these rules in ${options.config ?? 'config/'} to serve them.\n`,
    );
    return counts.invalid > 0 ? 1 : 0;
  } finally {
    run.progress.stop();
    await client?.close();
  }
}

function fatal(message: string): never {
  process.stderr.write(`replay: ${message}\n`);
  process.exit(2);
}

async function main(): Promise<number> {
  let options: ReplayOptions | null;
  let env: Env;
  try {
    env = loadEnv();
  } catch (err) {
    throw new ExitError((err as Error).message.replace(/\s*\n\s*/g, ' '));
  }
  try {
    options = parseReplayOptions(process.argv.slice(2), env);
  } catch (err) {
    if (err instanceof UsageError) throw new ExitError(`${err.message} (npm run replay -- --help)`);
    throw err;
  }
  if (!options) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  // Refused before reading anything: nobody could answer the question.
  if (options.apply && !options.yes && !process.stdin.isTTY) {
    throw new ExitError('--apply asks for confirmation and standard input is not a terminal: add --yes to apply without asking');
  }

  let product: Product;
  try {
    product = loadProduct(options.config ?? undefined);
  } catch (err) {
    throw new ExitError((err as Error).message.replace(/\s*\n\s*/g, ' '));
  }
  const carriers = options.carriers.map((name) => product.registry.resolve(name) ?? (() => { throw new ExitError(`--carrier: unknown carrier "${name}"`); })());
  const window: PollWindow = {
    since: options.sinceMs ?? 0, ...(options.untilMs !== null ? { until: options.untilMs } : {}), ...(carriers.length ? { carriers } : {}),
  };
  const output = options.output === '-' ? process.stdout : createWriteStream(options.output);
  const controller = new AbortController();
  process.once('SIGINT', () => {
    process.stderr.write('\nreplay: interrupted; stopping after the current step (run the same command again to resume an apply)\n');
    controller.abort(new ExitError('interrupted', 1));
  });
  const run: Run = {
    env, options, product, window, output,
    ctx: { rules: product.rules, resolveCarrier: (n) => product.registry.resolve(n) },
    filter: { sinceMs: options.sinceMs, untilMs: options.untilMs, carriers: carriers.length ? new Set(carriers) : null },
    // Progress only where a person may watch, and never into the records themselves.
    progress: createProgress({ enabled: !options.quiet && (process.stderr.isTTY || options.source === 'clickhouse') }),
    signal: controller.signal,
    seen: emptySpan(),
  };
  try {
    if (options.source === 'clickhouse' && (options.diff || options.apply)) return await runClickHouse(run);
    if (options.diff || options.apply) return await runDiff(run);
    return await runRecords(run);
  } finally {
    if (output !== process.stdout) await new Promise<void>((resolve) => output.end(resolve));
  }
}

main().then(
  (status) => { process.exitCode = status; },
  (err: unknown) => {
    const status = err instanceof ExitError ? err.status : 2;
    process.stderr.write(`replay: ${(err as Error).message}\n`);
    process.exit(status);
  },
);
