import { describe, expect, it } from 'vitest';
import { DAY_MS, DAY_S, HOUR_MS, IST_OFFSET, IST_OFFSET_MS, MINUTE_MS } from './index.ts';

describe('lib/time', () => {
  it('writes the IST offset once, as text and as milliseconds that agree', () => {
    expect(Date.parse('2026-11-20T05:30:00Z') - Date.parse(`2026-11-20T05:30:00${IST_OFFSET}`)).toBe(IST_OFFSET_MS);
  });

  it('has units that are what they say', () => {
    expect([MINUTE_MS, HOUR_MS, DAY_MS, DAY_S]).toEqual([60_000, 3_600_000, 86_400_000, 86_400]);
  });
});
