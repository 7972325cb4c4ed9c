import { describe, expect, it } from 'vitest';
import { product } from '../testutil/product.ts';
import { istParts, istToMs } from './ist.ts';
import {
  ProgressBook,
  FAILED_ATTEMPT_REMARKS,
  HOLD_REMARKS,
  LANES,
  SLOW_DELAY_MS,
  answerFor,
  deliveredTransitDays,
  scenarioOf,
} from './scenario.ts';
import type { SandboxShipment, SandboxStep, ScenarioAnswer, StepKind } from './types.ts';
import { DAY_MS as DAY, HOUR_MS as HOUR, MINUTE_MS as MINUTE } from '../time/index.ts';

// 2026-11-20 14:37:42.123 IST: mid-afternoon, seconds and ms that flooring must drop.
const NOW = istToMs(2026, 11, 20, 14, 37, 42) + 123;
const NOW_MINUTE = Math.floor(NOW / MINUTE) * MINUTE;

/** A delhivery-shaped number for scenario `ss` on lane `ll`. */
const awbOf = (ss: number, ll = 1, stem = '12345678') => `${stem}${String(ll).padStart(2, '0')}${String(ss).padStart(2, '0')}`;

function shipmentOf(answer: ScenarioAnswer): SandboxShipment {
  if (answer.kind !== 'shipment' && answer.kind !== 'slow') throw new Error(`expected a shipment, got ${answer.kind}`);
  return answer.shipment;
}

const story = (ss: number, now = NOW, ll = 1) => shipmentOf(answerFor('delhivery', awbOf(ss, ll), now));
const kinds = (s: SandboxShipment) => s.steps.map((step) => step.kind);
const latest = (s: SandboxShipment): SandboxStep => [...s.steps].sort((a, b) => a.at - b.at).at(-1)!;
const isChronological = (steps: SandboxStep[]) => steps.every((s, i) => i === 0 || s.at >= steps[i - 1]!.at);
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length / 2;
  return Number.isInteger(mid) ? (sorted[mid - 1]! + sorted[mid]!) / 2 : sorted[Math.floor(mid)]!;
};
const SHIPMENT_SCENARIOS = Array.from({ length: 25 }, (_, ss) => ss).filter((ss) => ![0, 17, 19].includes(ss));

describe('scenarioOf', () => {
  it('reads scenario and lane from any carrier shape (sandbox.md examples)', () => {
    expect(scenarioOf('1234567890104')).toEqual({ scenario: 4, lane: 1 });
    expect(scenarioOf('12345670104')).toEqual({ scenario: 4, lane: 1 });
    expect(scenarioOf('EE123450104IN')).toEqual({ scenario: 4, lane: 1 });
    expect(scenarioOf('FMPC0279651523')).toEqual({ scenario: 23, lane: 15 });
    expect(scenarioOf('7X105009916')).toEqual({ scenario: 16, lane: 99 });
  });

  it('uses scenario 02 on lane 00 below 4 digits', () => {
    expect(scenarioOf('ABC')).toEqual({ scenario: 2, lane: 0 });
    expect(scenarioOf('AB1C24')).toEqual({ scenario: 2, lane: 0 });
  });

  it('treats unknown scenarios (27-99) as 02 and keeps the lane', () => {
    expect(scenarioOf('1234560327')).toEqual({ scenario: 2, lane: 3 });
    expect(scenarioOf('1234560325')).toEqual({ scenario: 25, lane: 3 });
    expect(scenarioOf('1234560799')).toEqual({ scenario: 2, lane: 7 });
    expect(kinds(shipmentOf(answerFor('delhivery', '1234560157', NOW)))).toEqual(kinds(story(2)));
  });
});

describe('progressions (25, 26)', () => {
  it('each poll reveals the next stage at the poll time; shown stages keep their times; then it stays delivered', () => {
    const book = new ProgressBook();
    const seen: string[][] = [];
    let firstTimes: number[] = [];
    for (let poll = 0; poll < 7; poll++) {
      const now = NOW + poll * 3_600_000;
      const answer = answerFor('delhivery', '1234560125', now, book.poll('delhivery', '1234560125', now));
      const steps = shipmentOf(answer).steps;
      if (poll === 1) firstTimes = steps.map((s) => s.at);
      if (poll > 1) expect(steps.slice(0, 2).map((s) => s.at)).toEqual(firstTimes);
      seen.push(steps.map((s) => s.kind));
    }
    expect(seen.map((k) => k.at(-1))).toEqual(['booked', 'picked_up', 'hub_in', 'out_for_delivery', 'delivered', 'delivered', 'delivered']);
    expect(book.poll('delhivery', '1234560102', NOW)).toBeNull();
  });

  it('26 fails once (customer unavailable) between two out-for-delivery stages', () => {
    const book = new ProgressBook();
    let kinds: string[] = [];
    for (let poll = 0; poll < 7; poll++) kinds = shipmentOf(answerFor('dtdc', 'V01190126', NOW + poll * 60_000, book.poll('dtdc', 'V01190126', NOW + poll * 60_000))).steps.map((s) => s.kind);
    expect(kinds).toEqual(['booked', 'picked_up', 'hub_in', 'out_for_delivery', 'attempt_failed', 'out_for_delivery', 'delivered']);
  });
});

describe('LANES', () => {
  it('covers LL mod 10 with the origin → destination pincodes of sandbox.md', () => {
    expect(LANES.map((l) => `${l.origin.pincode}>${l.destination.pincode}`)).toEqual([
      '110001>560001', '400001>700001', '600001>500001', '380001>411001', '302001>226001',
      '682001>110001', '560001>400001', '700001>781001', '500001>600001', '141001>248001',
    ]);
    expect(story(2, NOW, 47).origin).toEqual({ city: 'Kolkata', state: 'West Bengal', pincode: '700001' });
  });

  it('passes three distinct hubs that are neither the origin nor the destination city', () => {
    for (const lane of LANES) {
      expect(new Set(lane.hubs).size).toBe(3);
      for (const hub of lane.hubs) expect([lane.origin.city, lane.destination.city]).not.toContain(hub);
    }
  });
});

describe('answerFor: failure behaviours', () => {
  it('answers not found, down, slow and malformed', () => {
    expect(answerFor('dtdc', awbOf(0), NOW)).toEqual({ kind: 'not_found' });
    expect(answerFor('dtdc', awbOf(17), NOW)).toEqual({ kind: 'down' });
    expect(answerFor('dtdc', awbOf(19), NOW)).toEqual({ kind: 'malformed' });
    const slow = answerFor('dtdc', awbOf(18), NOW);
    expect(slow.kind).toBe('slow');
    if (slow.kind !== 'slow') return;
    expect(slow.delayMs).toBe(SLOW_DELAY_MS);
    expect(kinds(slow.shipment)).toEqual(kinds(story(2)));
  });
});

describe('answerFor: every shipment story', () => {
  it('is chronological (15 aside), in whole minutes and never in the future', () => {
    // Also just after IST midnight, when "this morning" has barely begun.
    const nows = [NOW, istToMs(2026, 11, 21, 0, 3, 10), istToMs(2026, 11, 21, 7, 59, 0)];
    for (const now of nows) {
      for (const ss of SHIPMENT_SCENARIOS) {
        const s = story(ss, now);
        expect(s.steps.length, `scenario ${ss}`).toBeGreaterThan(0);
        if (ss !== 15) expect(isChronological(s.steps), `scenario ${ss}`).toBe(true);
        for (const step of s.steps) {
          expect(step.at % MINUTE).toBe(0);
          expect(step.at, `scenario ${ss} ${step.kind}`).toBeLessThanOrEqual(now);
        }
        expect(s.bookedAt).toBeLessThanOrEqual(s.steps[0]!.at);
      }
    }
  });

  it('starts with the booking at the origin and gives an EDD 5 days after booking (20 aside)', () => {
    for (const ss of SHIPMENT_SCENARIOS.filter((s) => s !== 15 && s !== 20)) {
      const s = story(ss);
      expect(s.steps[0]!.kind, `scenario ${ss}`).toBe('booked');
      expect(s.steps[0]!.location).toBe(s.origin.city);
      expect(s.edd! - s.bookedAt, `scenario ${ss}`).toBe(5 * DAY);
    }
  });

  it('01: booked yesterday, nothing else', () => {
    const s = story(1);
    expect(kinds(s)).toEqual(['booked']);
    expect(NOW_MINUTE - s.steps[0]!.at).toBeGreaterThanOrEqual(DAY);
    expect(NOW_MINUTE - s.steps[0]!.at).toBeLessThan(2 * DAY);
  });

  it('02: booked ~3 days ago, picked up 2 days ago, 3 hub scans at distinct hubs, last 5 hours ago', () => {
    const s = story(2);
    expect(kinds(s)).toEqual(['booked', 'picked_up', 'hub_in', 'hub_in', 'hub_in']);
    expect(NOW_MINUTE - s.steps[0]!.at).toBe(3 * DAY);
    expect(NOW_MINUTE - s.steps[1]!.at).toBe(2 * DAY);
    const hubs = s.steps.filter((step) => step.kind.startsWith('hub_')).map((step) => step.location);
    expect(new Set(hubs).size).toBe(3);
    expect(hubs).toEqual([...LANES[1]!.hubs]);
    expect(NOW_MINUTE - latest(s).at).toBe(5 * HOUR);
  });

  it('03: out for delivery this morning (IST)', () => {
    const s = story(3);
    expect(latest(s).kind).toBe('out_for_delivery');
    expect(latest(s).location).toBe('Kolkata');
    const p = istParts(latest(s).at);
    expect(p.day).toBe(istParts(NOW).day);
    expect(Number(p.hour)).toBeGreaterThanOrEqual(8);
    expect(Number(p.hour)).toBeLessThan(10);
    // Before 08:00 IST the OFD scan is clamped to the poll time's own day, never after the poll.
    const early = istToMs(2026, 11, 21, 0, 3, 0);
    const ofd = latest(story(3, early)).at;
    expect(ofd).toBeLessThanOrEqual(early);
    expect(istParts(ofd).day).toBe('21');
  });

  it('04: delivered yesterday at the destination after the number\'s own transit time', () => {
    const awb = awbOf(4);
    const s = story(4);
    expect(kinds(s).slice(-2)).toEqual(['out_for_delivery', 'delivered']);
    expect(NOW_MINUTE - latest(s).at).toBe(DAY);
    const pickup = s.steps.find((step) => step.kind === 'picked_up')!;
    expect((latest(s).at - pickup.at) / DAY).toBeCloseTo(deliveredTransitDays(awb), 6);
  });

  it('moves the parcel within the hour after every pickup (counter carriers count transit from there)', () => {
    for (const ss of SHIPMENT_SCENARIOS) {
      const s = story(ss);
      const steps = [...s.steps].sort((a, b) => a.at - b.at);
      const pickup = steps.findIndex((step) => step.kind === 'picked_up');
      if (pickup === -1) continue;
      expect(steps[pickup + 1]!.at - steps[pickup]!.at, `scenario ${ss}`).toBe(HOUR);
    }
  });

  it.each([
    [5, 'customer_unavailable'], [6, 'address_issue'], [7, 'refused'], [8, 'premises_closed'], [9, 'cod_not_ready'],
  ] as const)('%i: the latest scan is a failed attempt for %s with a remark saying so', (ss, reason) => {
    const last = latest(story(ss));
    expect(last.kind).toBe('attempt_failed');
    expect(last.ndr).toBe(reason);
    expect(FAILED_ATTEMPT_REMARKS[reason]).toContain(last.remark);
    expect(product.rules.ndrReason(last.remark!)).toBe(reason);
  });

  it('10: one failed attempt, then delivered the next day', () => {
    const s = story(10);
    expect(kinds(s).slice(-4)).toEqual(['out_for_delivery', 'attempt_failed', 'out_for_delivery', 'delivered']);
    const attempt = s.steps.find((step) => step.kind === 'attempt_failed')!;
    expect(attempt.ndr).toBe('customer_unavailable');
    expect(istParts(latest(s).at).day).not.toBe(istParts(attempt.at).day);
    expect(NOW_MINUTE - latest(s).at).toBe(DAY);
  });

  it('11: in transit, last scan 80 hours ago', () => {
    const s = story(11);
    expect(latest(s).kind).toBe('hub_in');
    expect(NOW_MINUTE - latest(s).at).toBe(80 * HOUR);
  });

  it('12: three failed attempts, then the return starts', () => {
    const s = story(12);
    expect(kinds(s).filter((k) => k === 'attempt_failed')).toHaveLength(3);
    expect(latest(s).kind).toBe('rto_initiated');
  });

  it('13: the return reaches the sender', () => {
    const s = story(13);
    expect(kinds(s).filter((k) => k === 'attempt_failed')).toHaveLength(3);
    expect(kinds(s).slice(-3)).toEqual(['rto_initiated', 'rto_in_transit', 'rto_delivered']);
    expect(latest(s).location).toBe(s.origin.city);
  });

  it('14: booked, then cancelled before pickup', () => {
    expect(kinds(story(14))).toEqual(['booked', 'cancelled']);
  });

  it('15: same-day scans in a shuffled (deterministic) order', () => {
    const s = story(15);
    expect(s.shuffled).toBe(true);
    expect(isChronological(s.steps)).toBe(false);
    expect(isChronological([...s.steps].reverse())).toBe(false);
    expect(Math.max(...s.steps.map((x) => x.at)) - Math.min(...s.steps.map((x) => x.at))).toBeLessThan(DAY);
    expect(story(15).steps).toEqual(s.steps);
    const sorted = [...s.steps].sort((a, b) => a.at - b.at).map((x) => x.kind);
    expect(sorted).toEqual(['booked', 'picked_up', 'hub_out', 'hub_in', 'hub_out', 'hub_in']);
  });

  it('16: remarks carry names, mobiles, +91 numbers, an OTP and an e-mail', () => {
    const remarks = story(16).steps.map((step) => step.remark).filter((r): r is string => r !== null).join(' | ');
    expect(remarks).toMatch(/Priya Sharma/);
    expect(remarks).toMatch(/\b\d{10}\b/);
    expect(remarks).toMatch(/\+91 \d{5} \d{5}/);
    expect(remarks).toMatch(/OTP \d{6}/);
    expect(remarks).toMatch(/[\w.]+@example\.com/);
  });

  it('20: in transit, the carrier EDD passed 2 days ago', () => {
    const s = story(20);
    expect(NOW_MINUTE - s.edd!).toBe(2 * DAY);
    expect(latest(s).kind).toBe('hub_in');
  });

  it('21: held for weather (NDR other), then moving again', () => {
    const s = story(21);
    const hold = s.steps.find((step) => step.kind === 'hold')!;
    expect(hold.ndr).toBe('other');
    expect(HOLD_REMARKS).toContain(hold.remark);
    expect(['hub_in', 'hub_out']).toContain(latest(s).kind);
    expect(latest(s).at).toBeGreaterThan(hold.at);
  });

  it('22: a new scan stamped with the poll time', () => {
    const first = story(22);
    const second = story(22, NOW + 2 * MINUTE);
    expect(latest(first).at).toBe(NOW_MINUTE);
    expect(latest(second).at).toBe(NOW_MINUTE + 2 * MINUTE);
    expect(kinds(first)).toEqual([...kinds(story(2)), 'hub_out']);
  });

  it.each([[23, 'lost'], [24, 'unmapped']] as const)('%i: the latest step is %s', (ss, kind: StepKind) => {
    expect(latest(story(ss)).kind).toBe(kind);
  });
});

describe('answerFor: time', () => {
  it('gives the same shipment for the same number within one minute', () => {
    for (const ss of SHIPMENT_SCENARIOS) {
      expect(answerFor('bluedart', awbOf(ss), NOW_MINUTE)).toEqual(answerFor('bluedart', awbOf(ss), NOW_MINUTE + 59_999));
    }
  });

  it('shifts every time by the time between two polls, and nothing else (03 is tied to the IST morning)', () => {
    const shift = 7 * HOUR + 13 * MINUTE;
    const shifted = (s: SandboxShipment, by: number): SandboxShipment => ({
      ...s,
      bookedAt: s.bookedAt + by,
      edd: s.edd === null ? null : s.edd + by,
      steps: s.steps.map((step) => ({ ...step, at: step.at + by })),
    });
    for (const ss of SHIPMENT_SCENARIOS.filter((s) => s !== 3)) {
      expect(story(ss, NOW + shift), `scenario ${ss}`).toEqual(shifted(story(ss), shift));
    }
  });

  it('accepts the number in any case and with surrounding space', () => {
    expect(answerFor('indiapost', ' ee123450104in ', NOW)).toEqual(answerFor('indiapost', 'EE123450104IN', NOW));
  });

  it('derives weight and service type from the number', () => {
    const a = story(2, NOW, 1);
    expect(a.weightGrams).toBeGreaterThan(0);
    expect(['surface', 'express']).toContain(a.serviceType);
    const weights = new Set(Array.from({ length: 20 }, (_, i) => story(2, NOW, i).weightGrams));
    expect(weights.size).toBeGreaterThan(1);
    expect(shipmentOf(answerFor('speedpost', 'EE123450102IN', NOW)).serviceType).toBe('speed_post');
  });
});

describe('delivered transit times', () => {
  it('give 30 delivered numbers on one lane a real spread between 1.5 and 7 days', () => {
    const numbers = Array.from({ length: 30 }, (_, i) => awbOf(i % 2 === 0 ? 4 : 10, 3, String(20000000 + i * 7919)));
    expect(new Set(numbers).size).toBe(30);
    const days = numbers.map((awb) => {
      const s = shipmentOf(answerFor('xpressbees', awb, NOW));
      expect(s.lane % 10).toBe(3);
      const pickup = s.steps.find((step) => step.kind === 'picked_up')!.at;
      const delivered = s.steps.find((step) => step.kind === 'delivered')!.at;
      expect((delivered - pickup) / DAY).toBeCloseTo(deliveredTransitDays(awb), 6);
      return (delivered - pickup) / DAY;
    });
    for (const d of days) {
      // From the first movement, an hour after pickup, the transit is still at least 1.5 days.
      expect(d - 1 / 24).toBeGreaterThanOrEqual(1.5);
      expect(d).toBeLessThanOrEqual(7);
    }
    const rounded = new Set(days.map((d) => Math.round(d * 10)));
    expect(rounded.size).toBeGreaterThan(15);
    expect(Math.max(...days) - Math.min(...days)).toBeGreaterThan(3);
    const m = median(days);
    expect(m).toBeGreaterThan(2.5);
    expect(m).toBeLessThan(6);
  });
});

describe('remarks survive carriers and the product rules', () => {
  it('every failed-attempt remark names its reason, also when cut at 40 characters', () => {
    for (const [reason, remarks] of Object.entries(FAILED_ATTEMPT_REMARKS)) {
      for (const remark of remarks) {
        expect(product.rules.ndrReason(remark), remark).toBe(reason);
        expect(product.rules.ndrReason(remark.slice(0, 40)), remark).toBe(reason);
      }
    }
    for (const remark of HOLD_REMARKS) expect(product.rules.ndrReason(remark), remark).toBe('other');
  });
});
