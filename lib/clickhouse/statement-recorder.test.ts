import { describe, expect, it } from 'vitest';
import { normalizeStatement, withTrackingDatabase } from './statement-recorder.ts';

describe('normalizeStatement (the statement catalogue key)', () => {
  it('gives statements that differ only in values one key', () => {
    const a = "SELECT count() AS c FROM carrier_polls WHERE carrier IN ('delhivery', 'dtdc') AND polled_at >= toDateTime(1700000000)";
    const b = "SELECT count() AS c\n  FROM carrier_polls WHERE carrier IN ('ekart') AND polled_at >= toDateTime(1800000000)";
    expect(normalizeStatement(a)).toBe(normalizeStatement(b));
    expect(normalizeStatement(a)).toBe('SELECT count()AS c FROM carrier_polls WHERE carrier IN(?)AND polled_at >= toDateTime(?)');
  });

  it('keeps statements of another shape apart', () => {
    expect(normalizeStatement("SELECT x FROM t WHERE a = 'x'")).not.toBe(normalizeStatement("SELECT x FROM t WHERE b = 'x'"));
  });

  it('collapses lists of tuples, drops comments (quotes in them too) and escaped quotes in literals', () => {
    expect(normalizeStatement("SELECT 1 FROM t WHERE (a, b) IN (('x', 1), ('y', 2)) -- the lane's rows\nAND c = 'it\\'s'")).toBe(
      'SELECT ? FROM t WHERE(a,b)IN((?))AND c = ?',
    );
  });

  it("names the tests' throw-away databases `tracking`", () => {
    expect(withTrackingDatabase('CREATE DATABASE IF NOT EXISTS tracking_test_0a1b2c')).toBe('CREATE DATABASE IF NOT EXISTS tracking');
    expect(normalizeStatement('DROP TABLE tracking_test_mig_x1y2.events')).toBe('DROP TABLE tracking.events');
  });
});
