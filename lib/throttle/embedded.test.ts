import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EmbeddedThrottle } from './embedded.ts';
import type { ThrottleRule } from './rule.ts';

const RULE: ThrottleRule = { name: 'trial', limit: 2, windowMs: 60_000 };
const NOW = Date.parse('2026-11-28T05:00:00.000Z');
const ADDRESS = '203.0.113.7';

let dataDir: string;
const file = () => join(dataDir, 'throttle', 'attempts.json');
const withFile = (text: string) => {
  mkdirSync(join(dataDir, 'throttle'), { recursive: true });
  writeFileSync(file(), text);
};
/** Opens the throttle, keeping what it warned. */
const open = () => {
  const warnings: string[] = [];
  return { throttle: new EmbeddedThrottle(dataDir, (message) => warnings.push(message)), warnings };
};

beforeEach(() => { dataDir = mkdtempSync(join(tmpdir(), 'throttle-')); });
afterEach(() => { rmSync(dataDir, { recursive: true, force: true }); });

describe('embedded throttle', () => {
  it('keeps attempts across a reopen, without a warning', async () => {
    const { throttle, warnings } = open();
    await throttle.record(RULE, ADDRESS, NOW);
    await throttle.record(RULE, ADDRESS, NOW + 1);
    expect(await throttle.check(RULE, ADDRESS, NOW + 2)).toEqual({ blocked: true, retryAfterSeconds: 60 });
    const again = open();
    expect(await again.throttle.check(RULE, ADDRESS, NOW + 2)).toEqual({ blocked: true, retryAfterSeconds: 60 });
    expect([...warnings, ...again.warnings]).toEqual([]);
  });

  it('opens with no file at all, without a warning', async () => {
    const { throttle, warnings } = open();
    expect(await throttle.check(RULE, ADDRESS, NOW)).toEqual({ blocked: false });
    expect(warnings).toEqual([]);
  });

  it.each([
    ['an empty file', '', /is empty/],
    ['a file of blanks', '\n  \n', /is empty/],
    ['garbage', '\u0000\u0000{"trial:203', /is damaged/],
    ['JSON of another shape', '{"trial:203.0.113.7": "many"}', /is not a throttle file/],
  ])('opens on %s: no attempts counted, a warning naming the file, and the next attempt rewrites it', async (_, text, problem) => {
    withFile(text);
    const { throttle, warnings } = open();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(file());
    expect(warnings[0]).toMatch(problem);
    expect(await throttle.check(RULE, ADDRESS, NOW)).toEqual({ blocked: false });
    await throttle.record(RULE, ADDRESS, NOW);
    expect(JSON.parse(readFileSync(file(), 'utf8'))).toEqual({ [`trial:${ADDRESS}`]: [NOW] });
  });
});
