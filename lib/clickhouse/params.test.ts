import { describe, expect, it } from 'vitest';
import { bindQueryParams, queryParams } from './params.ts';

describe('bindQueryParams: {name:Type} as literals, on every ClickHouse release', () => {
  it('binds strings escaped, integers, floats and dates checked', () => {
    const sql = "SELECT 1 WHERE mode = {mode:String} AND n >= {min:UInt32} AND x < {f:Float64} AND d = {day:Date} AND mode != {mode:String}";
    expect(queryParams(sql)).toEqual(new Map([['mode', 'String'], ['min', 'UInt32'], ['f', 'Float64'], ['day', 'Date']]));
    expect(bindQueryParams(sql, { mode: "te'st\\", min: '30', f: '0.5', day: '2026-11-01' }))
      .toBe("SELECT 1 WHERE mode = 'te\\'st\\\\' AND n >= toUInt32(30) AND x < toFloat64(0.5) AND d = toDate('2026-11-01') AND mode != 'te\\'st\\\\'");
  });

  it('refuses a missing value, a value not of its type, and unsupported types, naming the parameter', () => {
    expect(() => bindQueryParams('SELECT {mode:String}, {n:UInt8}', { n: '1' })).toThrow('no value for {mode}: pass --param mode=…');
    expect(() => bindQueryParams('SELECT {n:UInt8}', { n: '1; DROP TABLE x' })).toThrow('--param n: "1; DROP TABLE x" is not a whole number (UInt8)');
    expect(() => bindQueryParams('SELECT {n:UInt8}', { n: '-1' })).toThrow('is not a whole number');
    expect(() => bindQueryParams('SELECT {d:Date}', { d: '2026-13-45' })).toThrow('is not a date');
    expect(() => bindQueryParams('SELECT {a:Array(String)}', { a: 'x' })).toThrow('not supported');
    expect(() => bindQueryParams('SELECT {t:DateTime}', { t: '2026-11-27T00:00:00+05:30' })).toThrow('is not a UTC date-time');
    expect(() => bindQueryParams('SELECT {t:DateTime}', { t: '2026-02-30 25:00:00' })).toThrow('is not a UTC date-time');
  });

  it('binds a DateTime as UTC, written with a space or as ISO ending in Z', () => {
    expect(bindQueryParams('SELECT {t:DateTime}', { t: '2026-11-27 00:00:00' })).toBe("SELECT toDateTime('2026-11-27 00:00:00', 'UTC')");
    expect(bindQueryParams('SELECT {t:DateTime}', { t: '2026-11-27T06:30:00Z' })).toBe("SELECT toDateTime('2026-11-27 06:30:00', 'UTC')");
  });
});
