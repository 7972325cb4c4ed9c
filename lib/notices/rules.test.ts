import { describe, expect, it } from 'vitest';
import type { KeyRecord } from '../access/index.ts';
import { NOTICE_LEAD_MS, noticesDue } from './rules.ts';

const H = 3_600_000;
const END = Date.parse('2026-12-10T14:30:00.000Z');

function record(overrides: Partial<KeyRecord> = {}): KeyRecord {
  return {
    prefix: 'trk_live_Ab3dE9x',
    hash: 'a'.repeat(64),
    mode: 'live',
    email: 'owner@example.com',
    plan: 'growth',
    status: 'active',
    period_start: new Date(END - 30 * 24 * H).toISOString(),
    period_end: new Date(END).toISOString(),
    lookups_limit: 4000,
    daily_quota: 800,
    burst_per_second: 10,
    created_at: new Date(END - 30 * 24 * H).toISOString(),
    renewed_at: null,
    notices_sent: {},
    ...overrides,
  };
}

const at = (msBeforeEnd: number) => new Date(END - msBeforeEnd);
const whichAt = (r: KeyRecord, msBeforeEnd: number) => noticesDue([r], at(msBeforeEnd)).map((d) => d.which);

describe('noticesDue', () => {
  it('opens the three-day notice exactly 72 hours before period_end', () => {
    expect(NOTICE_LEAD_MS.three_day).toBe(72 * H);
    expect(whichAt(record(), 72 * H + 1)).toEqual([]);
    expect(whichAt(record(), 72 * H)).toEqual(['three_day']);
    expect(whichAt(record(), 48 * H)).toEqual(['three_day']);
    expect(whichAt(record(), 24 * H + 1)).toEqual(['three_day']);
  });

  it('treats the 24 hours before period_end as the last day, and nothing is due once it has ended', () => {
    expect(whichAt(record(), 24 * H)).toEqual(['last_day']);
    expect(whichAt(record(), 1)).toEqual(['last_day']);
    expect(whichAt(record(), 0)).toEqual([]);
    expect(whichAt(record(), -H)).toEqual([]);
  });

  it('sends each notice once per period', () => {
    const threeSent = record({ notices_sent: { three_day: at(60 * H).toISOString() } });
    expect(whichAt(threeSent, 50 * H)).toEqual([]);
    expect(whichAt(threeSent, 10 * H)).toEqual(['last_day']);
    const bothSent = record({ notices_sent: { three_day: at(60 * H).toISOString(), last_day: at(20 * H).toISOString() } });
    expect(whichAt(bothSent, 10 * H)).toEqual([]);
  });

  it('does not send a missed three-day notice late: the last-day notice covers it', () => {
    expect(whichAt(record({ notices_sent: {} }), 5 * H)).toEqual(['last_day']);
  });

  it('never notifies revoked or suspended keys; a resumed key gets its notice', () => {
    expect(whichAt(record({ status: 'revoked' }), 48 * H)).toEqual([]);
    expect(whichAt(record({ status: 'revoked' }), 5 * H)).toEqual([]);
    expect(whichAt(record({ status: 'suspended' }), 48 * H)).toEqual([]);
    expect(whichAt(record({ status: 'active' }), 48 * H)).toEqual(['three_day']);
  });

  it('returns every due notice in listing order, with the record it belongs to', () => {
    const a = record({ prefix: 'trk_live_AAAAAAA', period_end: new Date(END).toISOString() });
    const b = record({ prefix: 'trk_test_BBBBBBB', period_end: new Date(END + 50 * H).toISOString() });
    const c = record({ prefix: 'trk_live_CCCCCCC', period_end: new Date(END + 10 * 24 * H).toISOString() });
    const due = noticesDue([a, b, c], at(10 * H));
    expect(due.map((d) => [d.record.prefix, d.which])).toEqual([['trk_live_AAAAAAA', 'last_day'], ['trk_test_BBBBBBB', 'three_day']]);
    expect(due[0]!.record).toBe(a);
  });
});
