/** Parses the command line, picks the command, calls the API and maps the outcome to an exit code. */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Env } from '../../../lib/config/index.ts';
import { AdminApiError, createAdminClient } from './admin-client.ts';
import type { Command, OptionValues } from './command.ts';
import { keysCreate } from './keys-create.ts';
import { runAnalyze } from './analyze.ts';
import { runLanes } from './lanes.ts';
import { runSandboxHistory } from './sandbox-history.ts';
import { runSql } from './sql.ts';
import { runPredict } from './predict.ts';
import { keysRenew } from './keys-renew.ts';
import { keysShow } from './keys-show.ts';
import { keysResume, keysRevoke, keysSuspend } from './keys-status.ts';
import { USAGE, UsageError } from './usage.ts';

export const COMMANDS: readonly Command[] = [keysCreate, keysShow, keysSuspend, keysResume, keysRevoke, keysRenew];

const GLOBAL_OPTIONS: NonNullable<ParseArgsConfig['options']> = {
  url: { type: 'string' },
  token: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
};

export type CliEnv = Partial<Pick<Env, 'PORT' | 'ADMIN_TOKEN' | 'TRACKING_API_KEY' | 'CLICKHOUSE_URL' | 'CLICKHOUSE_DATABASE' | 'DATA_DIR' | 'KAFKA_BROKERS' | 'CONFIG_DIR'>>;

export interface CliIo {
  /** The variables the CLI uses, as `loadEnv()` read them. */
  env: CliEnv;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

interface Parsed {
  command: Command;
  args: string[];
  values: OptionValues;
}

function parse(argv: string[]): Parsed | 'help' {
  // One parse over every command's options, then a check that the chosen command takes them.
  const options = Object.assign({}, GLOBAL_OPTIONS, ...COMMANDS.map((c) => c.options)) as NonNullable<ParseArgsConfig['options']>;
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true, tokens: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const values = parsed.values as OptionValues;
  if (values.help) return 'help';
  const { positionals } = parsed;
  const command = COMMANDS.find((c) => c.words.every((w, i) => positionals[i] === w));
  if (!command) {
    const given = positionals.slice(0, 2).join(' ');
    throw new UsageError(given ? `Unknown command "${given}".` : 'No command given.');
  }
  const name = command.words.join(' ');
  for (const token of parsed.tokens ?? []) {
    if (token.kind === 'option' && !(token.name in GLOBAL_OPTIONS) && !(token.name in command.options)) {
      throw new UsageError(`${name} does not take ${token.rawName}.`);
    }
  }
  return { command, args: positionals.slice(command.words.length), values };
}

function baseUrl(values: OptionValues, env: CliEnv): string {
  const url = typeof values.url === 'string' ? values.url : `http://127.0.0.1:${env.PORT || 3000}`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`--url must be an http(s) URL, got "${url}".`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new UsageError(`--url must be an http(s) URL, got "${url}".`);
  return url;
}

function adminToken(values: OptionValues, env: CliEnv): string {
  const token = typeof values.token === 'string' ? values.token : env.ADMIN_TOKEN;
  if (!token) throw new UsageError('No admin token: pass --token or set ADMIN_TOKEN.');
  return token;
}

/** Runs one command line; returns the exit code (0 ok, 1 API error, 2 usage error). */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  // `lanes` calls the public API with an API key, not the admin API: its own parser.
  if (argv[0] === 'lanes') return runLanes(argv.slice(1), io);
  if (argv[0] === 'analyze') return runAnalyze(argv.slice(1), io);
  // `sandbox history` generates data locally (and may send it to the stores): no API call.
  if (argv[0] === 'sandbox' && argv[1] === 'history') return runSandboxHistory(argv.slice(2), io);
  // `sql` reads ClickHouse (CLICKHOUSE_URL), not the API.
  if (argv[0] === 'sql') return runSql(argv.slice(1), io);
  if (argv[0] === 'predict') return runPredict(argv.slice(1), io);
  try {
    const parsed = parse(argv);
    if (parsed === 'help') {
      io.stdout(USAGE);
      return 0;
    }
    const request = parsed.command.request({ args: parsed.args, values: parsed.values });
    const client = createAdminClient(baseUrl(parsed.values, io.env), adminToken(parsed.values, io.env));
    const answer = await client.call(request);
    io.stdout(`${JSON.stringify(answer, null, 2)}\n`);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr(`error: ${err.message}\n\n${USAGE}`);
      return 2;
    }
    if (err instanceof AdminApiError) {
      const detail = [err.code, err.status === null ? null : `HTTP ${err.status}`].filter(Boolean).join(', ');
      io.stderr(`error: ${err.message}${detail ? ` (${detail})` : ''}\n`);
      return 1;
    }
    io.stderr(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}
