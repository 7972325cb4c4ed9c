/** What every command module exports. */
import type { ParseArgsConfig } from 'node:util';
import type { AdminRequest } from './admin-client.ts';
import type { CliIo } from './io.ts';
import { UsageError } from './usage.ts';

export type OptionValues = Record<string, string | boolean | undefined>;

export interface CommandInput {
  /** Positional arguments after the command's words (e.g. the key prefix). */
  args: string[];
  values: OptionValues;
}

export interface Command {
  /** The words that select it, e.g. ['keys', 'create']. */
  words: readonly string[];
  /** Its own options (the global --url, --token, --help come on top). */
  options: NonNullable<ParseArgsConfig['options']>;
  /** The API call this command line stands for; throws UsageError before anything is sent. */
  request(input: CommandInput): AdminRequest;
}

/**
 * A command that runs whole: its own parser, usage text and exit code, because it does not call the
 * admin API (the public API with an API key, ClickHouse, local files).
 */
export interface RunCommand {
  /** The words that select it, e.g. ['sandbox', 'history']. */
  words: readonly string[];
  /** Runs the command line after its words; returns the exit code (0 ok, 1 failed, 2 usage error). */
  run(argv: string[], io: CliIo): Promise<number>;
}

/** Exactly one positional argument: the key prefix. */
export function onePrefix(args: string[], command: string): string {
  if (args.length === 0) throw new UsageError(`${command} needs a key prefix, e.g. trk_live_Ab3dE9x.`);
  if (args.length > 1) throw new UsageError(`${command} takes one key prefix, got: ${args.join(' ')}.`);
  return args[0]!;
}

export function stringOption(values: OptionValues, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

export function requiredOption(values: OptionValues, name: string, command: string): string {
  const value = stringOption(values, name);
  if (value === undefined || value.trim() === '') throw new UsageError(`${command} needs --${name}.`);
  return value;
}

/** A positive whole number, or undefined when the option was not given. */
export function positiveIntOption(values: OptionValues, name: string): number | undefined {
  const value = stringOption(values, name);
  if (value === undefined) return undefined;
  if (!/^[1-9]\d*$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new UsageError(`--${name} must be a positive whole number, got "${value}".`);
  }
  return Number(value);
}
