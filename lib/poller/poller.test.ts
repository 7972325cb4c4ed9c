import { describe, expect, it } from 'vitest';
import { DEFAULT_REFRESH_POLICY, refreshShipments, shipmentsDue, type RefreshCandidate } from './index.ts';
import { HOUR_MS as HOUR } from '../time/index.ts';

const now = Date.UTC(2026, 10, 21, 12, 0);
const candidate = (awb: string, hoursAgo: number, carrier = 'dtdc'): RefreshCandidate =>
  ({ carrier, awb, mode: 'live', lastPolledMs: now - hoursAgo * HOUR });

describe('which shipments the poller re-polls', () => {
  it('takes shipments last polled 2 hours ago or more, oldest first', () => {
    const due = shipmentsDue([candidate('A', 1), candidate('B', 5), candidate('C', 2), candidate('D', 3)], now);
    expect(due.map((c) => c.awb)).toEqual(['B']);
  });

  it('spreads the work: each 5-minute tick takes at most 1/24 of the active shipments', () => {
    const many = Array.from({ length: 240 }, (_, i) => candidate(`S${i}`, 3 + i / 100));
    const due = shipmentsDue(many, now);
    expect(due).toHaveLength(10);
    expect(due[0]!.awb).toBe('S239');
  });

  it('leaves shipments not polled for more than 30 days alone', () => {
    expect(shipmentsDue([candidate('OLD', 31 * 24), candidate('NEW', 29 * 24)], now).map((c) => c.awb)).toEqual(['NEW']);
  });

  it('honours a custom policy', () => {
    const policy = { ...DEFAULT_REFRESH_POLICY, intervalMs: 10 * 60_000, tickMs: 10 * 60_000 };
    expect(shipmentsDue([candidate('A', 0.2), candidate('B', 0.1)], now, policy).map((c) => c.awb)).toEqual(['A']);
  });
});

describe('refreshing shipments', () => {
  it('keeps at most N polls in flight per carrier and counts outcomes; a throw counts as an error', async () => {
    const inFlight = new Map<string, number>();
    let maxPerCarrier = 0;
    const due = [
      ...Array.from({ length: 12 }, (_, i) => candidate(`D${i}`, 3, 'dtdc')),
      ...Array.from({ length: 6 }, (_, i) => candidate(`E${i}`, 3, 'ekart')),
    ];
    const totals = await refreshShipments(due, async (c) => {
      inFlight.set(c.carrier, (inFlight.get(c.carrier) ?? 0) + 1);
      maxPerCarrier = Math.max(maxPerCarrier, ...inFlight.values());
      await new Promise((resolve) => setTimeout(resolve, 5));
      inFlight.set(c.carrier, inFlight.get(c.carrier)! - 1);
      if (c.awb === 'E0') throw new Error('boom');
      return c.awb.startsWith('D') ? 'found' : 'not_found';
    }, 3);
    expect(maxPerCarrier).toBe(3);
    expect(totals).toEqual({ polled: 18, found: 12, notFound: 5, errors: 1 });
  });

  it('once aborted (the poller stopping) starts no further poll; those in flight finish and count', async () => {
    const due = Array.from({ length: 20 }, (_, i) => candidate(`A${i}`, 3));
    const stop = new AbortController();
    const started: string[] = [];
    const totals = await refreshShipments(due, async (c) => {
      started.push(c.awb);
      // The third poll to start is when the stop comes: it and the one beside it are in flight.
      if (started.length === 3) stop.abort();
      await new Promise((resolve) => setTimeout(resolve, 5));
      return 'found';
    }, 2, stop.signal);
    expect(started).toEqual(['A0', 'A1', 'A2']);
    expect(totals).toEqual({ polled: 3, found: 3, notFound: 0, errors: 0 });
  });
});
