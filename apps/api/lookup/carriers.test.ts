/** The per-carrier cap of a batch's lookups (pure scheduling: no carrier, no clock). */
import { describe, expect, it } from 'vitest';
import type { LookupResult } from '../../../lib/tracking/index.ts';
import { perCarrierGate } from './carriers.ts';

const NOT_FOUND: LookupResult = { kind: 'not_found' };

describe('perCarrierGate', () => {
  it('runs at most N lookups of one carrier at once, and never holds up another carrier', async () => {
    const gate = perCarrierGate(10);
    const running = new Map<string, number>();
    const peak = new Map<string, number>();
    const releases: (() => void)[] = [];
    const task = (carrier: string) => gate(carrier, async () => {
      running.set(carrier, (running.get(carrier) ?? 0) + 1);
      peak.set(carrier, Math.max(peak.get(carrier) ?? 0, running.get(carrier)!));
      await new Promise<void>((resolve) => releases.push(resolve));
      running.set(carrier, running.get(carrier)! - 1);
      return NOT_FOUND;
    });
    const all = [...Array.from({ length: 30 }, () => task('delhivery')), ...Array.from({ length: 3 }, () => task('dtdc'))];
    await new Promise((resolve) => setImmediate(resolve));
    // While 10 Delhivery lookups hold their slots, DTDC's three run too.
    expect(running.get('delhivery')).toBe(10);
    expect(running.get('dtdc')).toBe(3);
    while (releases.length > 0) {
      releases.splice(0).forEach((release) => release());
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await Promise.all(all)).toHaveLength(33);
    expect(peak.get('delhivery')).toBe(10);
    expect(running.get('delhivery')).toBe(0);
  });
});
