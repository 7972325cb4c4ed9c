import { describe, expect, it } from 'vitest';
import { changeOf, snapshotOf, trackingEvent, EMPTY_SNAPSHOT, type ShipmentSnapshot } from '../push/index.ts';
import { journeyPoll, makePoll } from '../testutil/polls.ts';
import { answer } from '../testutil/product.ts';
import { noticeOf, type NoticeFacts } from './kinds.ts';

/** The notices a watch of the delhivery journey would ask for, poll after poll (each poll one more scan). */
function noticesAlong(carrier: string): (NoticeFacts | null)[] {
  const full = journeyPoll(carrier, 1);
  const scans = [...full.scans].sort((a, b) => a.occurred_at.localeCompare(b.occurred_at));
  let before: ShipmentSnapshot = { ...EMPTY_SNAPSHOT, polled_ms: 0 };
  const out: (NoticeFacts | null)[] = [];
  scans.forEach((_, i) => {
    const poll = makePoll({ ...full, scans: scans.slice(0, i + 1), polled_at: new Date(Date.parse(full.polled_at) + i * 1000).toISOString() });
    const record = answer(poll);
    const change = changeOf(before, record);
    before = snapshotOf(record, Date.parse(poll.polled_at));
    if (!change) return;
    out.push(noticeOf(trackingEvent({
      keyPrefix: 'trk_test_Ab3dE9x', mode: 'test', type: change.type, sequence: i + 1, previous: change.previous, newEvents: change.newEvents, tracking: record,
      atMs: Date.parse(poll.polled_at),
    })));
  });
  return out;
}

describe('which notice an event is', () => {
  it('tells a journey as picked up, a failed attempt with its reason, out for delivery and delivered: nothing else', () => {
    const told = noticesAlong('delhivery').filter((n) => n !== null);
    // The record counts two failed attempts (Pending, then Undelivered): each is news, under its own key.
    expect(told.map((n) => n.dedupeKey)).toEqual(['picked_up', 'failed_attempt#1', 'failed_attempt#2', 'out_for_delivery#3', 'delivered']);
    expect(told[1]).toMatchObject({ kind: 'failed_attempt', reason: 'customer_unavailable' });
    expect(told[3]!.kind).toBe('out_for_delivery');
    expect(told[4]).toMatchObject({ kind: 'delivered', ends: true });
  });

  it('gives the same key for the same event seen twice, and none for analyzer events', () => {
    const a = noticesAlong('delhivery').filter((n) => n !== null).map((n) => n.dedupeKey);
    expect(noticesAlong('delhivery').filter((n) => n !== null).map((n) => n.dedupeKey)).toEqual(a);
    expect(noticeOf({
      schema: 'webhook_event.v1', id: 'evt_x', key_prefix: 'trk_test_Ab3dE9x', mode: 'test', type: 'analysis.completed', carrier: null, awb: null,
      sequence: 1, created_at: '2026-11-28T00:00:00.000Z', body: '{}',
    })).toBeNull();
  });
});
