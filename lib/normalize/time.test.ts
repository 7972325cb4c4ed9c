import { describe, expect, it } from 'vitest';
import { toClickHouseDateTime } from '../clickhouse/datetime.ts';
import { DAY_MS, toUtcDateTimeText, toUtcIso } from './time.ts';

/** Instants across 1970-9999: edges of days, years and the range, plus a seeded random spread. */
function instants(): number[] {
  const edges = [0, 1, 999, 1000, DAY_MS - 1, DAY_MS, Date.UTC(2000, 1, 29, 23, 59, 59, 999), Date.UTC(2026, 10, 20, 3, 45),
    Date.UTC(2106, 1, 7, 6, 28, 15), Date.UTC(9999, 11, 31, 23, 59, 59, 999)];
  let seed = 42;
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  const spread = Array.from({ length: 20_000 }, () => Math.floor(random() * Date.UTC(9999, 11, 31)));
  const recent = Array.from({ length: 20_000 }, () => Date.UTC(2020, 0, 1) + Math.floor(random() * 20 * 365 * DAY_MS));
  return [...edges, ...spread, ...recent];
}

describe('time formatting', () => {
  it('toUtcIso writes exactly what toISOString writes', () => {
    for (const ms of [...instants(), -1, -DAY_MS * 400, Date.UTC(10000, 0, 1), 1.5]) {
      expect(toUtcIso(ms)).toBe(new Date(ms).toISOString());
    }
  });

  it('toUtcDateTimeText and toClickHouseDateTime match the former toISOString slice', () => {
    for (const ms of instants()) {
      const expected = new Date(Math.floor(ms / 1000) * 1000).toISOString().slice(0, 19).replace('T', ' ');
      expect(toUtcDateTimeText(ms)).toBe(expected);
      if (ms <= 0xffffffff * 1000) expect(toClickHouseDateTime(ms)).toBe(expected);
    }
    expect(toUtcDateTimeText(-1)).toBeNull();
    expect(toUtcDateTimeText(Number.NaN)).toBeNull();
  });
});
