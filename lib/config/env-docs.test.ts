/**
 * One configuration path: every variable the env schema reads is documented in the operators'
 * configuration page (docs/operators/configuration.md, "Environment"), and the table names no
 * variable the schema does not read.
 */
import { readFileSync } from 'node:fs';
import { Lexer, type Tokens } from 'marked';
import { describe, expect, it } from 'vitest';
import { ConfigError, EnvSchema, loadEnv, loadSandboxEnv } from './index.ts';

const CONFIGURATION_PAGE = new URL('../../docs/operators/configuration.md', import.meta.url);

/** The variables named (in code spans) in the first column of the page's variable table. */
function documentedVariables(): Set<string> {
  const tokens = new Lexer({ gfm: true }).lex(readFileSync(CONFIGURATION_PAGE, 'utf8'));
  const table = tokens.find((t): t is Tokens.Table => t.type === 'table' && t.header[0]?.text === 'variable');
  expect(table, 'a table whose first column is "variable"').toBeDefined();
  const names = new Set<string>();
  for (const row of table!.rows) {
    for (const [, name] of row[0]!.text.matchAll(/`([A-Z][A-Z0-9_<>]*)`/g)) names.add(name!);
  }
  return names;
}

describe('environment', () => {
  it('docs/operators/configuration.md lists every variable of the env schema, and only those', () => {
    const documented = documentedVariables();
    const schema = Object.keys(EnvSchema.shape).sort();
    expect(schema.filter((name) => !documented.has(name))).toEqual([]);
    // Carrier variables are named per slug (read by lib/carriers/poll.ts).
    expect([...documented].filter((name) => !name.includes('<') && !schema.includes(name))).toEqual([]);
  });

  it('reads the variables once read apart from the schema, with their defaults', () => {
    const env = loadEnv({ CLICKHOUSE_DATABASE: 'analytics', LANE_WINDOW_DAYS: '30', SANDBOX_FAULTS: '{}', TRACKING_API_KEY: 'trk_test_x' });
    expect(env).toMatchObject({ CLICKHOUSE_DATABASE: 'analytics', LANE_WINDOW_DAYS: 30, SANDBOX_FAULTS: '{}', TRACKING_API_KEY: 'trk_test_x' });
    expect(loadEnv({ LANE_WINDOW_DAYS: '' }).LANE_WINDOW_DAYS).toBe(90);
    expect(loadEnv({}).PORT).toBe(3000);
    expect(loadSandboxEnv({}).PORT).toBe(4010);
    expect(loadSandboxEnv({ PORT: '4999', HOST: '0.0.0.0' })).toMatchObject({ PORT: 4999, HOST: '0.0.0.0' });
  });

  it('refuses bad values naming the variable', () => {
    expect(() => loadEnv({ LANE_WINDOW_DAYS: '0' })).toThrow(ConfigError);
    expect(() => loadEnv({ LANE_WINDOW_DAYS: '7.5' })).toThrow(/LANE_WINDOW_DAYS/);
    expect(() => loadEnv({ CLICKHOUSE_DATABASE: 'x; DROP' })).toThrow(/CLICKHOUSE_DATABASE/);
    expect(() => loadSandboxEnv({ PORT: '70000' })).toThrow(/PORT/);
  });
});
