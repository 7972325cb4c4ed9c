/** Parses the command line, picks the command, calls the API and maps the outcome to an exit code. */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { keptAdminToken } from '../../../lib/config/index.ts';
import { AdminApiError, createAdminClient } from './admin-client.ts';
import { analyzeCommand } from './analyze.ts';
import { backupCommand } from './backup.ts';
import type { Command, OptionValues, RunCommand } from './command.ts';
import type { CliEnv, CliIo } from './io.ts';
import { keysCreate } from './keys-create.ts';
import { keysRenew } from './keys-renew.ts';
import { keysShow } from './keys-show.ts';
import { keysResume, keysRevoke, keysSuspend } from './keys-status.ts';
import { lanesCommand } from './lanes.ts';
import { predictCommand } from './predict.ts';
import { sandboxHistoryCommand } from './sandbox-history.ts';
import { sqlCommand } from './sql.ts';
import { storeMoveCommand } from './store-move.ts';
import { USAGE, UsageError } from './usage.ts';

/** The admin API's commands: parsed here, each one an API call. */
export const COMMANDS: readonly Command[] = [keysCreate, keysShow, keysSuspend, keysResume, keysRevoke, keysRenew];

/**
 * The commands that run whole (their own parser and usage): `lanes` and `analyze` call the public
 * API with an API key, `sandbox history` generates data here, `sql` and `predict` read the stores,
 * `store move` carries the embedded store into Redis and Kafka, `backup` copies it while it runs.
 */
export const RUN_COMMANDS: readonly RunCommand[] = [
  lanesCommand, analyzeCommand, sandboxHistoryCommand, sqlCommand, predictCommand, storeMoveCommand, backupCommand,
];

const GLOBAL_OPTIONS: NonNullable<ParseArgsConfig['options']> = {
  url: { type: 'string' },
  token: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
};

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

/** --token, else ADMIN_TOKEN, else the token a start without ADMIN_TOKEN generated and kept in DATA_DIR. */
function adminToken(values: OptionValues, env: CliEnv): string {
  const token = typeof values.token === 'string' ? values.token : env.ADMIN_TOKEN ?? keptAdminToken(env.DATA_DIR ?? './data');
  if (!token) throw new UsageError('No admin token: pass --token or set ADMIN_TOKEN (or run where the API keeps DATA_DIR/admin-token).');
  return token;
}

/** Runs one command line; returns the exit code (0 ok, 1 API error, 2 usage error). */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const whole = RUN_COMMANDS.find((c) => c.words.every((w, i) => argv[i] === w));
  if (whole) return whole.run(argv.slice(whole.words.length), io);
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
