/** Known answers of the sandbox's two hashes (values of the copies they replaced): its numbers depend on them. */
import { describe, expect, it } from 'vitest';
import { fnv1aFmix32, fnv1aHalfFmix32 } from './hash32.ts';

describe('the sandbox hashes', () => {
  it('keep their values: the full finaliser for the scenarios, the half one for network numbers', () => {
    expect(['', 'transit:1234567890102', 'network:delhivery:1234567890127'].map(fnv1aFmix32)).toEqual([2872998923, 1265978751, 4284173781]);
    expect(['', 'transit:1234567890102', 'network:delhivery:1234567890127'].map(fnv1aHalfFmix32)).toEqual([1572119809, 2930423586, 282923542]);
  });
});
