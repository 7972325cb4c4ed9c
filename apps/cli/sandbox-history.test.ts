/**
 * `npm run cli -- sandbox history`: the raw-poll log it writes is valid carrier_poll.v1, holds all
 * 11 carriers with several polls a journey, maps with the product's rules without an unknown scan,
 * and `--into-stores` without services appends it to the embedded log for test mode only.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { normalizePoll } from '../../lib/normalize/index.ts';
import { loadProduct } from '../../lib/product/index.ts';
import { CarrierPollSchema, type CarrierPoll } from '../../lib/schemas/index.ts';
import { DEFAULT_CONFIG_DIR } from '../../lib/config/index.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const NODE = process.execPath; // node runs the TypeScript itself
const dir = mkdtempSync(join(tmpdir(), 'history-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function cli(args: string[], env: NodeJS.ProcessEnv = {}) {
  // Without services (the embedded default), whatever this shell has set.
  const clean: NodeJS.ProcessEnv = { ...process.env, ...env };
  for (const name of ['KAFKA_BROKERS', 'CLICKHOUSE_URL', 'REDIS_URL']) delete clean[name];
  return promisify(execFile)(NODE, ['apps/cli/main.ts', ...args], { cwd: ROOT, env: clean, encoding: 'utf8' });
}

describe('sandbox history', () => {
  it('writes a raw-poll log every carrier\'s mapping rules read', { timeout: 120_000 }, async () => {
    const out = join(dir, 'h.jsonl');
    const { stderr } = await cli(['sandbox', 'history', '--shipments', '1500', '--days', '30', '--seed', '3', '--end', '2026-11-20T00:00:00Z', '--out', out]);
    expect(stderr).toMatch(/1500 journeys \(\d+ delivered, \d+ returned, \d+ lost, \d+ still open at the end\), \d+ polls/);
    const polls = readFileSync(out, 'utf8').trim().split('\n').map((line) => CarrierPollSchema.parse(JSON.parse(line)) as CarrierPoll);
    const perJourney = new Map<string, number>();
    for (const p of polls) perJourney.set(`${p.carrier}:${p.awb}`, (perJourney.get(`${p.carrier}:${p.awb}`) ?? 0) + 1);
    expect(perJourney.size).toBeGreaterThan(1400);
    expect(polls.length / perJourney.size).toBeGreaterThan(2.5);
    expect(new Set(polls.map((p) => p.carrier)).size).toBe(11);
    expect(polls.every((p) => Date.parse(p.polled_at) <= Date.parse('2026-11-20T00:00:00Z'))).toBe(true);
    const { rules } = loadProduct(DEFAULT_CONFIG_DIR);
    const stages = new Set<string>();
    for (const poll of polls) {
      const result = normalizePoll(poll, rules);
      expect(result.kind, poll.awb).toBe('found');
      if (result.kind !== 'found') continue;
      expect(result.shipment.facts.unmapped_scans, `${poll.carrier} ${JSON.stringify(poll.scans.at(-1))}`).toBe(0);
      stages.add(result.shipment.facts.stage);
    }
    expect([...stages]).toEqual(expect.arrayContaining(['in_transit', 'out_for_delivery', 'delivered', 'delivery_attempted', 'rto_delivered']));
  });

  it('--into-stores without services appends the polls to DATA_DIR/polls.ndjson, for test mode', { timeout: 120_000 }, async () => {
    const dataDir = join(dir, 'data');
    await cli(['sandbox', 'history', '--shipments', '200', '--days', '10', '--seed', '4', '--into-stores'], { DATA_DIR: dataDir });
    const lines = readFileSync(join(dataDir, 'polls.ndjson'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { mode: string; poll: CarrierPoll });
    expect(lines.length).toBeGreaterThan(400);
    expect(new Set(lines.map((l) => l.mode))).toEqual(new Set(['test']));
  });

  it('refuses a run without --out or --into-stores (exit 2)', { timeout: 60_000 }, async () => {
    await expect(cli(['sandbox', 'history', '--shipments', '10'])).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('--out and/or --into-stores') });
  });
});
