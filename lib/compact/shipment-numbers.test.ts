import { describe, expect, it } from 'vitest';
import { ShipmentNumbers } from './shipment-numbers.ts';

describe('one numbering of shipments', () => {
  it('numbers each mode:carrier:AWB once, in the order first seen, and gives back its key and AWB', () => {
    const numbers = new ShipmentNumbers();
    expect(numbers.numberOf('live', 'delhivery', 'A1')).toBe(0);
    expect(numbers.numberOf('test', 'delhivery', 'A1')).toBe(1);
    expect(numbers.numberOf('live', 'bluedart', 'A1')).toBe(2);
    expect(numbers.numberOf('live', 'delhivery', 'A1')).toBe(0);
    // An AWB may hold ':' (the mode and slug never do): it is all that follows the second one.
    expect(numbers.numberOf('live', 'ecom', 'X:9')).toBe(3);
    expect(numbers.key(1)).toBe('test:delhivery:A1');
    expect(numbers.awb(3)).toBe('X:9');
    expect(numbers.size).toBe(4);
    expect(() => numbers.key(4)).toThrow(RangeError);
  });

  it('round-trips its keys into an empty numbering, which then numbers new shipments after them', () => {
    const numbers = new ShipmentNumbers();
    for (const awb of ['A', 'B', 'C']) numbers.numberOf('live', 'dtdc', awb);
    const again = new ShipmentNumbers();
    again.importKeys(numbers.exportKeys());
    expect(again.numberOf('live', 'dtdc', 'B')).toBe(1);
    expect(again.numberOf('live', 'dtdc', 'D')).toBe(3);
    expect(() => again.importKeys(['live:dtdc:E'])).toThrow(/empty/);
    expect(() => new ShipmentNumbers().importKeys(['live:dtdc:A', 'live:dtdc:A'])).toThrow(/twice/);
  });
});
