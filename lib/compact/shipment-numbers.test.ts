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
    // Any text: the keys are held as UTF-8 bytes.
    expect(numbers.numberOf('live', 'ecom', 'अ१२ 😀')).toBe(4);
    expect(numbers.key(1)).toBe('test:delhivery:A1');
    expect(numbers.awb(3)).toBe('X:9');
    expect(numbers.awb(4)).toBe('अ१२ 😀');
    expect(numbers.size).toBe(5);
    expect(() => numbers.key(5)).toThrow(RangeError);
    expect(() => numbers.key(-1)).toThrow(RangeError);
  });

  it('keeps every number as it grows past its table, its byte buffer and its scratch', () => {
    const numbers = new ShipmentNumbers();
    const awb = (i: number) => (i % 997 === 0 ? `LONG${'9'.repeat(300)}${i}` : `AWB${i}`);
    for (let i = 0; i < 50_000; i++) expect(numbers.numberOf('test', 'dtdc', awb(i))).toBe(i);
    for (let i = 0; i < 50_000; i += 7) {
      expect(numbers.numberOf('test', 'dtdc', awb(i))).toBe(i);
      expect(numbers.awb(i)).toBe(awb(i));
    }
    // Keys that share their first bytes, and a key that is another's start, stay apart.
    expect(numbers.numberOf('test', 'dtdc', 'AWB1234')).toBe(1234);
    expect(numbers.numberOf('test', 'dtdc', 'AWB123')).toBe(123);
    expect(numbers.size).toBe(50_000);
  });

  it('round-trips its state into an empty numbering, which then numbers new shipments after it', () => {
    const numbers = new ShipmentNumbers();
    for (const awb of ['A', 'B', 'C']) numbers.numberOf('live', 'dtdc', awb);
    const again = new ShipmentNumbers();
    again.importState(numbers.exportState());
    expect(again.numberOf('live', 'dtdc', 'B')).toBe(1);
    expect(again.numberOf('live', 'dtdc', 'D')).toBe(3);
    expect(again.key(2)).toBe('live:dtdc:C');
    expect(() => again.importState(numbers.exportState())).toThrow(/empty/);
  });

  it('refuses a state it could not have written: a key twice, ends past the bytes or going backwards, a prefix not named', () => {
    // Keys as the numbering writes them: the prefix's number (two bytes, little-endian), then the AWB.
    const key = (prefix: number, awb: string) => [prefix, 0, ...new TextEncoder().encode(awb)];
    const bytes = Uint8Array.from([...key(0, 'A'), ...key(0, 'A')]);
    const prefixes = ['live:dtdc:'];
    expect(() => new ShipmentNumbers().importState({ prefixes, bytes, ends: Uint32Array.of(3, 6) })).toThrow(/live:dtdc:A twice/);
    expect(() => new ShipmentNumbers().importState({ prefixes, bytes, ends: Uint32Array.of(3, 30) })).toThrow(/differ in length/);
    expect(() => new ShipmentNumbers().importState({ prefixes, bytes, ends: Uint32Array.of(3, 2, 6) })).toThrow(/backwards/);
    const other = Uint8Array.from([...key(0, 'A'), ...key(1, 'B')]);
    expect(() => new ShipmentNumbers().importState({ prefixes, bytes: other, ends: Uint32Array.of(3, 6) })).toThrow(/key 1 has no prefix/);
  });

  it('holds a key in two bytes more than its AWB, the mode:carrier: prefix written once', () => {
    const numbers = new ShipmentNumbers();
    for (let i = 0; i < 1000; i++) numbers.numberOf(i % 2 ? 'test' : 'live', i % 3 ? 'delhivery' : 'xpressbees', `AWB${i}`);
    const { prefixes, bytes } = numbers.exportState();
    expect(prefixes.sort()).toEqual(['live:delhivery:', 'live:xpressbees:', 'test:delhivery:', 'test:xpressbees:']);
    const awbBytes = Array.from({ length: 1000 }, (_, i) => `AWB${i}`.length).reduce((a, b) => a + b, 0);
    expect(bytes.length).toBe(awbBytes + 2 * 1000);
    expect(numbers.key(998)).toBe('live:delhivery:AWB998');
    expect(numbers.numberOfKeyed('test:xpressbees:AWB999')).toBe(999);
  });
});
