import { describe, expect, it } from 'vitest';
import { sqlDateTime, sqlIdentifier, sqlInt, sqlPairList, sqlString, sqlStringList } from './sql.ts';

describe('sql helpers (unit)', () => {
  it('quotes and escapes strings', () => {
    expect(sqlString("it's")).toBe("'it\\'s'");
    expect(sqlString('a\\b')).toBe("'a\\\\b'");
    expect(sqlString('\0\n\r\t\b\f')).toBe("'\\0\\n\\r\\t\\b\\f'");
    expect(sqlString('plain')).toBe("'plain'");
  });

  it('refuses strings that cannot round-trip and non-strings', () => {
    expect(() => sqlString('lone \ud800 surrogate')).toThrow(/surrogate/);
    expect(() => sqlString('\udc00')).toThrow(/surrogate/);
    expect(() => sqlString(42 as unknown as string)).toThrow(TypeError);
    expect(sqlString('pair \ud83d\ude9a ok')).toBe("'pair 🚚 ok'");
  });

  it('accepts only plain identifiers', () => {
    expect(sqlIdentifier('tracking_test_ab12')).toBe('`tracking_test_ab12`');
    for (const bad of ['', '1abc', 'a-b', 'a b', 'a`b', 'a;b', 'db.table', "x'", 'tracking\0', 'é']) {
      expect(() => sqlIdentifier(bad), bad).toThrow(TypeError);
    }
  });

  it('validates numbers, lists and times', () => {
    expect(sqlInt(42)).toBe('42');
    expect(() => sqlInt(1.5)).toThrow(TypeError);
    expect(() => sqlInt(Number.NaN)).toThrow(TypeError);
    expect(() => sqlInt(2 ** 60)).toThrow(TypeError);
    expect(sqlStringList(['a', "b'"])).toBe("('a', 'b\\'')");
    expect(() => sqlStringList([])).toThrow(TypeError);
    expect(sqlPairList([['dtdc', "X'1"]])).toBe("(('dtdc', 'X\\'1'))");
    expect(sqlDateTime(Date.UTC(2026, 10, 20, 3, 45, 0, 999))).toBe(`toDateTime(${Date.UTC(2026, 10, 20, 3, 45) / 1000}, 'UTC')`);
    expect(() => sqlDateTime(-1000)).toThrow(TypeError);
  });
});
