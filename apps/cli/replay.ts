/**
 * npm run replay -- --input <file|-> [--output <file|->]
 * Replays carrier_poll.v1 NDJSON through today's mapping rules (contracts.md "Replay").
 * Exit status 1 when any line was invalid, 2 on a usage or configuration error.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { parseArgs } from 'node:util';
import cliProgress from 'cli-progress';
import { loadProduct } from '../../lib/product/index.ts';
import { replayStream, type ReplayTotals } from '../../lib/replay/index.ts';

const USAGE = 'usage: npm run replay -- --input <file|-> [--output <file|->]';

function fail(message: string): never {
  process.stderr.write(`replay: ${message}\n${USAGE}\n`);
  process.exit(2);
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
  if (args['from-kafka'] || args.diff) fail('--from-kafka and --diff need the data pipeline (KAFKA_BROKERS / CLICKHOUSE_URL), which this build does not include yet');
  if (!args.input) fail('--input is required');

  const product = loadProduct();
  const input = args.input === '-' ? process.stdin : createReadStream(args.input);
  input.on('error', (err: Error) => fail(`cannot read ${args.input}: ${err.message}`));
  const output = args.output === '-' ? process.stdout : createWriteStream(args.output!);

  // A progress bar only where a person is watching, never mixed into piped output.
  const showProgress = process.stderr.isTTY && args.output !== '-';
  const bar = showProgress
    ? new cliProgress.SingleBar({ format: 'replay | {value} polls | {records} records | {invalid} invalid', stream: process.stderr }, cliProgress.Presets.shades_classic)
    : null;
  bar?.start(0, 0, { records: 0, invalid: 0 });

  const totals: ReplayTotals = await replayStream(input, output, { rules: product.rules, resolveCarrier: (n) => product.registry.resolve(n) }, {
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
