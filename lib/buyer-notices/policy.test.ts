import { describe, expect, it } from 'vitest';
import { DAILY_CAP, sendableAt, takeDaySlot, type DaySlots } from './policy.ts';

const ist = (text: string) => Date.parse(`${text}+05:30`);
const quiet = { start: '21:00', end: '09:00' };

describe('quiet hours', () => {
  it('defer a notice due at night to 09:00 IST, the same night either side of midnight', () => {
    expect(sendableAt('delivered', ist('2026-11-28T22:15:00'), quiet)).toBe(ist('2026-11-29T09:00:00'));
    expect(sendableAt('running_late', ist('2026-11-29T03:40:30'), quiet)).toBe(ist('2026-11-29T09:00:00'));
    expect(sendableAt('delivered', ist('2026-11-28T20:59:00'), quiet)).toBe(ist('2026-11-28T20:59:00'));
    expect(sendableAt('delivered', ist('2026-11-29T09:00:00'), quiet)).toBe(ist('2026-11-29T09:00:00'));
  });

  it('never hold out for delivery, and a key without quiet hours sends at once', () => {
    expect(sendableAt('out_for_delivery', ist('2026-11-29T07:10:00'), quiet)).toBe(ist('2026-11-29T07:10:00'));
    expect(sendableAt('delivered', ist('2026-11-28T23:00:00'), null)).toBe(ist('2026-11-28T23:00:00'));
  });

  it('work within one day too (e.g. 13:00–14:00)', () => {
    expect(sendableAt('picked_up', ist('2026-11-28T13:30:00'), { start: '13:00', end: '14:00' })).toBe(ist('2026-11-28T14:00:00'));
  });
});

describe('the daily cap', () => {
  it(`lets ${DAILY_CAP} notices a shipment go per IST day, then none until the next; a retry keeps its slot`, () => {
    let slots: DaySlots | null = null;
    for (const id of ['a', 'b', 'c', 'd']) slots = takeDaySlot(slots, id, ist('2026-11-28T10:00:00'));
    expect(slots!.ids).toEqual(['a', 'b', 'c', 'd']);
    expect(takeDaySlot(slots, 'e', ist('2026-11-28T23:59:00'))).toBeNull();
    expect(takeDaySlot(slots, 'b', ist('2026-11-28T23:59:00'))).toEqual(slots);
    // 00:01 IST is a new day (18:31 UTC the day before).
    expect(takeDaySlot(slots, 'e', Date.parse('2026-11-28T18:31:00Z'))).toEqual({ day: slots!.day + 1, ids: ['e'] });
  });
});
