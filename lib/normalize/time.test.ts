import { describe, expect, it } from 'vitest';
import { toClickHouseDateTime } from '../clickhouse/datetime.ts';
import { DAY_MS } from '../time/index.ts';
import { parseCarrierTime, toUtcDateTimeText, toUtcIso } from './time.ts';

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

describe('parseCarrierTime', () => {
  /** The reading before the arithmetic fast path: IST appended to offset-less times, then Date.parse. */
  const byDateParse = (iso: string) => Date.parse(/(Z|[+-]\d{2}:?\d{2})$/.test(iso) ? iso : `${iso}+05:30`);

  it('reads every carrier time as Date.parse does', () => {
    let seed = 7;
    const random = (n: number) => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31), seed % n);
    const pad = (n: number, width: number) => String(n).padStart(width, '0');
    const samples = [
      '2026-11-20T09:15:00', '2026-02-28T23:59:59', '2026-02-29T10:00:00', '2026-02-30T10:00:00', '2026-04-31T10:00:00',
      '2026-13-01T10:00:00', '2026-00-10T10:00:00', '2026-01-00T10:00:00', '2026-01-01T24:00:00', '2026-01-01T23:60:00',
      '2026-01-01T23:59:60', '0999-01-01T00:00:00', '0050-01-01T00:00:00', '1000-01-01T00:00:00', '9999-12-31T23:59:59',
      '2026-11-20T09:15:00Z', '2026-11-20T09:15:00+05:30', '2026-11-20T09:15', '2026-11-20T09:15:00.5', '2026-11-20 09:15:00',
      '2026-11-2OT09:15:00', '+02026-11-20T09:1', '2026/11/20T09:15:00', '２026-11-20T09:15:00', '',
    ];
    for (let i = 0; i < 20_000; i++) {
      samples.push(`${pad(random(10_000), 4)}-${pad(random(14), 2)}-${pad(random(33), 2)}T${pad(random(26), 2)}:${pad(random(62), 2)}:${pad(random(62), 2)}`);
    }
    for (const iso of samples) expect(parseCarrierTime(iso), iso).toBe(byDateParse(iso));
  });
});
