import { describe, expect, it } from 'vitest';
import { parseReplayOptions, UsageError } from './options.ts';

const parse = (args: string[], env: NodeJS.ProcessEnv = {}) => parseReplayOptions(args, env);
const usage = (args: string[], env: NodeJS.ProcessEnv = {}) => {
  try {
    parse(args, env);
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).not.toContain('\n');
    return (err as Error).message;
  }
  throw new Error(`no usage error for ${args.join(' ')}`);
};

describe('replay options', () => {
  it('refuses bad options and bad time ranges with one line each', () => {
    expect(usage(['--from-clickhouse', '--since', 'last week'])).toMatch(/--since must be an ISO 8601 date or date-time/);
    expect(usage(['--from-clickhouse', '--since', '2026'])).toMatch(/--since must be/);
    expect(usage(['--from-clickhouse', '--since', '2026-11-02', '--until', '2026-11-01'])).toMatch(/--until \(2026-11-01\) must be after --since \(2026-11-02\)/);
    expect(usage(['--from-clickhouse', '--since', '2026-11-02', '--until', '2026-11-02'])).toMatch(/must be after/);
    expect(usage(['--from-kafka'])).toMatch(/--from-kafka needs --since/);
    expect(usage(['--from-clickhouse'])).toMatch(/--from-clickhouse needs --since/);
    expect(usage(['--input', 'a', '--from-embedded'])).toMatch(/use one source, not --input and --from-embedded/);
    expect(usage(['--input', '-', '--frobnicate'])).toMatch(/Unknown option '--frobnicate'/);
    expect(usage(['--input', '-', 'stray'])).toMatch(/positional/i);
    expect(usage(['--from-kafka', '--since', '2026-11-01', '--apply'])).toMatch(/use --from-clickhouse/);
    expect(usage(['--from-embedded', '--against', 'clickhouse', '--diff'])).toMatch(/--input <DATA_DIR>\/polls.ndjson --against clickhouse/);
    expect(usage(['--from-clickhouse', '--since', '2026-11-01', '--baseline', 'x', '--diff'])).toMatch(/--baseline is for the embedded default/);
    expect(usage(['--input', '-', '--diff', '--against', 'redis'])).toMatch(/--against must be clickhouse or embedded/);
    expect(usage(['--input', '-', '--yes'])).toMatch(/--yes goes with --apply/);
  });

  it('picks what a diff compares with from the source and the environment', () => {
    expect(parse(['--from-embedded', '--diff'])).toMatchObject({ source: 'embedded', against: 'embedded', dataDir: './data' });
    expect(parse(['--from-kafka', '--since', '2026-11-01T00:00:00Z', '--diff'])).toMatchObject({ against: 'clickhouse', sinceMs: Date.UTC(2026, 10, 1) });
    expect(parse(['--input', 'p.ndjson', '--diff'])).toMatchObject({ against: 'embedded' });
    expect(parse(['--input', 'p.ndjson', '--diff'], { CLICKHOUSE_URL: 'http://x:8123' })).toMatchObject({ against: 'clickhouse' });
    expect(parse(['--from-embedded', '--apply', '--yes'], { DATA_DIR: '/srv/data', CONFIG_DIR: '/srv/config' })).toMatchObject({ apply: true, yes: true, dataDir: '/srv/data', config: '/srv/config' });
    expect(parse(['--from-clickhouse', '--since', '2026-10-01', '--until', '2026-11-01', '--carrier', 'dtdc', '--carrier', 'blue-dart'])).toMatchObject({ carriers: ['dtdc', 'blue-dart'], untilMs: Date.UTC(2026, 10, 1) });
    expect(parse(['--help'])).toBeNull();
  });
});
