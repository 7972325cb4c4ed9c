/**
 * Run by scripts/test.sh after the services tests (pass 3), which record every statement the code
 * sends (lib/clickhouse/statement-recorder.ts): each recorded shape must be in the checked-in catalogue that
 * test/clickhouse-current.test.ts runs on the current ClickHouse engine, so that check covers
 * every statement the code has.
 */
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { normalizeStatement } from '../lib/clickhouse/statement-recorder.ts';
import { loadCatalogue, readRecording, RECORDING_FILE } from './clickhouse-catalogue.ts';

describe('the catalogue of statements sent to ClickHouse (test/clickhouse-statements.json)', () => {
  it('holds every statement shape this test run recorded', () => {
    expect(existsSync(RECORDING_FILE), `${RECORDING_FILE}: nothing recorded; npm test records it in its first passes`).toBe(true);
    const known = new Set(loadCatalogue().map((entry) => normalizeStatement(entry.sql)));
    const missing = readRecording().filter((entry) => !known.has(entry.key)).map((entry) => `${entry.from}: ${entry.sql}`);
    expect(missing, 'add them with: node test/clickhouse-catalogue.ts').toEqual([]);
  });
});
