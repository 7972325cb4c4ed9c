import { describe, expect, it } from 'vitest';
import { goldenPolls } from '../testutil/golden-polls.ts';
import { isCertainlyCarrierPoll } from './carrier-poll-check.ts';
import { CarrierPollSchema } from './carrier-poll.ts';

/** Values that break one field or another: wrong types, bounds, formats, unicode lengths. */
const REPLACEMENTS: unknown[] = [
  undefined, null, '', 'x', ' ', 0, -1, 1.5, -0, 2 ** 53, Number.MAX_SAFE_INTEGER, true, {}, [], ['x'], [{}],
  'a'.repeat(40), 'a'.repeat(41), '😀'.repeat(20), '😀'.repeat(40), '😀'.repeat(41), '😀', '\ud83d', '\ud83d'.repeat(41), `${'😀'.repeat(39)}\ud83d`,
  '2026-11-20T12:00:00', '2026-11-20T12:00:00Z', '2026-11-20T12:00:00.123+05:30', '2026-11-20T12:00', '2026-11-20 12:00:00',
  '2026-02-30T10:00:00Z', '2026-11-20T24:00:00Z', '2026-11-20T12:00:00+0530', '2026-11-20T12:00:00.1234567890Z', '२०२६-11-20T12:00:00',
  '00000000-0000-4000-8000-000000000001', '00000000-0000-0000-0000-000000000000', '00000000-0000-9000-8000-000000000001', 'ZZZZZZZZ-0000-4000-8000-000000000001',
  'carrier_poll.v1', 'carrier_poll.v2', 'lookup', 'poller', 'ok', 'error', 'not_found', 'delhivery',
];

type Json = Record<string, unknown> | unknown[];

/** Every variant of `value` with one field replaced, one key removed, or one unknown key added. */
function* variants(value: Json): Generator<unknown> {
  const keys = Array.isArray(value) ? value.map((_, i) => i) : Object.keys(value);
  const copy = () => structuredClone(value) as Record<string | number, unknown>;
  if (!Array.isArray(value)) {
    const extra = copy();
    extra.unexpected = 1;
    yield extra;
  }
  for (const key of keys) {
    const field = (value as Record<string | number, unknown>)[key];
    for (const replacement of REPLACEMENTS) {
      const v = copy();
      if (replacement === undefined) delete v[key];
      else v[key] = replacement;
      yield v;
    }
    if (field !== null && typeof field === 'object') {
      for (const inner of variants(field as Json)) {
        const v = copy();
        v[key] = inner;
        yield v;
      }
    }
  }
}

describe('isCertainlyCarrierPoll', () => {
  const polls = goldenPolls().map((poll) => JSON.parse(JSON.stringify(poll)) as Json);

  it('passes the valid polls as zod would output them', () => {
    for (const poll of polls) {
      expect(isCertainlyCarrierPoll(poll)).toBe(true);
      expect(CarrierPollSchema.parse(poll)).toStrictEqual(poll);
    }
  });

  it('never passes what zod refuses, and what it passes zod passes unchanged', () => {
    let refusedByZod = 0;
    let passed = 0;
    for (const poll of polls.slice(0, 12).concat(polls.slice(-6))) {
      for (const variant of variants(poll)) {
        const zod = CarrierPollSchema.safeParse(variant);
        if (!zod.success) refusedByZod++;
        if (!isCertainlyCarrierPoll(variant)) continue;
        passed++;
        expect(zod.success, JSON.stringify(variant)).toBe(true);
        expect(zod.data).toStrictEqual(variant);
      }
    }
    // The variants do exercise both sides.
    expect(refusedByZod).toBeGreaterThan(10_000);
    expect(passed).toBeGreaterThan(1_000);
  });
});
