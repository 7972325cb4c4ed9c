import { describe, expect, it } from 'vitest';
import { AnchorBook } from './anchors.ts';
import { answerFor } from './scenario.ts';
import { HOUR_MS as HOUR } from '../time/index.ts';

const T0 = Date.parse('2026-11-20T04:00:00Z');

describe('the anchor book', () => {
  it('keeps a number\'s first poll per carrier (the number as the carrier reads it), and forgets the least recent past its bound', () => {
    const book = new AnchorBook(2);
    expect(book.anchor('delhivery', '1234560102', T0)).toBe(T0);
    expect(book.anchor('delhivery', ' 1234560102 ', T0 + HOUR)).toBe(T0);
    expect(book.anchor('ekart', '1234560102', T0 + HOUR)).toBe(T0 + HOUR);
    book.anchor('bluedart', '1234560102', T0 + 2 * HOUR);
    // Three numbers in a book of two: the least recently polled one starts again.
    expect(book.anchor('delhivery', '1234560102', T0 + 3 * HOUR)).toBe(T0 + 3 * HOUR);
    // Kept to the second: the first poll's answer is told from the same anchor as every later one.
    expect(book.anchor('dtdc', '1234560102', T0 + 1_234)).toBe(T0 + 1_000);
    expect(book.anchor('dtdc', '1234560102', T0 + HOUR)).toBe(T0 + 1_000);
  });

  it('a story told from its anchor keeps its scans\' times at a later poll', () => {
    const first = answerFor('delhivery', '1234560102', T0);
    const later = answerFor('delhivery', '1234560102', T0 + 6 * HOUR, null, T0);
    expect(later).toEqual(first);
    expect(answerFor('delhivery', '1234560102', T0 + 6 * HOUR)).not.toEqual(first);
  });
});
