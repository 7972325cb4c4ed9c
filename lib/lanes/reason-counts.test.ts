import { describe, expect, it } from 'vitest';
import { ReasonCounts } from './reason-counts.ts';

describe('reason counts per lane', () => {
  it('counts each reason of each lane apart, up and down, and lists those above zero by name', () => {
    const counts = new ReasonCounts();
    counts.add(3, 'CUSTOMER_UNAVAILABLE', 1);
    counts.add(3, 'ADDRESS_ISSUE', 1);
    counts.add(3, 'CUSTOMER_UNAVAILABLE', 1);
    counts.add(7, 'CUSTOMER_UNAVAILABLE', 1);
    expect(counts.of(3)).toEqual([['ADDRESS_ISSUE', 1], ['CUSTOMER_UNAVAILABLE', 2]]);
    expect(counts.of(7)).toEqual([['CUSTOMER_UNAVAILABLE', 1]]);
    // A closure leaving the window takes its reasons back; a reason at zero is not listed.
    counts.add(3, 'ADDRESS_ISSUE', -1);
    expect(counts.of(3)).toEqual([['CUSTOMER_UNAVAILABLE', 2]]);
    counts.add(3, 'ADDRESS_ISSUE', 1);
    expect(counts.of(3)).toEqual([['ADDRESS_ISSUE', 1], ['CUSTOMER_UNAVAILABLE', 2]]);
    // Lanes never given a reason, below or beyond the ones seen.
    expect(counts.of(0)).toEqual([]);
    expect(counts.of(1000)).toEqual([]);
  });
});
