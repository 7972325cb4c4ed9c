import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AWB_RULE, CanonicalAwbSchema, awbText, isEchoOf, parseAwb, requireAwb, storedAwb } from './awb.ts';

describe('parseAwb', () => {
  it.each([
    ['1234567890102', '1234567890102'],
    ['  ee123456789in\t', 'EE123456789IN'],
    ['ab-12', 'AB-12'],
    ['abcd', 'ABCD'],
    ['A'.repeat(40), 'A'.repeat(40)],
    ['\u00a0fmpc0279658213\n', 'FMPC0279658213'],
  ])('reads %j as %s', (raw, canonical) => {
    expect(parseAwb(raw)).toBe(canonical);
  });

  it.each([
    ['too short', 'abc'],
    ['too long', 'A'.repeat(41)],
    ['empty', ''],
    ['only spaces', '    '],
    ['an inner space', 'AB 1234'],
    ['a slash', 'AB/1234'],
    ['an underscore', 'AB_1234'],
    ['a non-ASCII letter that upper-cases to ASCII', 'stra\u00dfe'],
    ['a ligature that upper-cases to ASCII', '\ufb00ab1'],
    ['Devanagari digits', '\u0968\u0966\u0968\u096c'],
    ['a number', 12345678],
    ['null', null],
    ['an object', { toString: () => 'ABCD1234' }],
  ])('refuses %s', (_what, raw) => {
    expect(parseAwb(raw)).toBeNull();
  });

  it('accepts only 4 to 40 upper-case letters, digits or dashes, and reads its own output unchanged', () => {
    fc.assert(fc.property(fc.oneof(fc.string({ maxLength: 50 }), fc.stringMatching(/^\s*[A-Za-z0-9-]{1,45}\s*$/), fc.anything()), (raw) => {
      const awb = parseAwb(raw);
      if (awb === null) return;
      expect(awb).toMatch(/^[A-Z0-9-]{4,40}$/);
      expect(parseAwb(awb)).toBe(awb);
    }), { numRuns: 2_000 });
  });

  it('accepts every trimmed 4 to 40 of [A-Za-z0-9-], whatever the case and padding', () => {
    fc.assert(fc.property(fc.stringMatching(/^[A-Za-z0-9-]{4,40}$/), fc.constantFrom('', ' ', '\t', '\n '), (text, pad) => {
      expect(parseAwb(`${pad}${text}${pad}`)).toBe(text.toUpperCase());
    }), { numRuns: 1_000 });
  });
});

describe('the other readings of a number', () => {
  it('requireAwb throws with the rule, naming what it got', () => {
    expect(requireAwb(' ab-12 ')).toBe('AB-12');
    expect(() => requireAwb('ab')).toThrow(`a consignment number is ${AWB_RULE}, got "ab"`);
  });

  it('awbText is what the parser reads (a refused row shows it)', () => {
    expect(awbText('  xx!1 ')).toBe('xx!1');
    expect(awbText(42)).toBe('');
  });

  it('storedAwb reads stored text canonical without refusing it; isEchoOf compares a carrier\'s echo so', () => {
    expect(storedAwb(' ab1 ')).toBe('AB1');
    const awb = requireAwb('FMPC0279658213');
    expect(isEchoOf(' fmpc0279658213', awb)).toBe(true);
    expect(isEchoOf('FMPC0279658214', awb)).toBe(false);
    expect(isEchoOf(null, awb)).toBe(false);
    expect(isEchoOf(undefined, awb)).toBe(false);
  });

  it('CanonicalAwbSchema takes configuration\'s numbers only as the parser writes them', () => {
    expect(CanonicalAwbSchema.parse('EE123456789IN')).toBe('EE123456789IN');
    for (const bad of ['ee123456789in', ' EE123456789IN', 'ABC', 'AB/1234']) expect(CanonicalAwbSchema.safeParse(bad).success).toBe(false);
  });
});
