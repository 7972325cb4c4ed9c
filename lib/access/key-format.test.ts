import { describe, expect, it } from 'vitest';
import { generateKey, hashKey, isKeyPrefix, isWellFormedKey, keyMode, keyPrefix } from './key-format.ts';

const SECRET = 'Ab3dE9xYz0123456789abcdefGHIJKLm';

describe('key format', () => {
  it('accepts trk_live_ and trk_test_ followed by exactly 32 letters and digits', () => {
    expect(SECRET).toHaveLength(32);
    expect(keyMode(`trk_live_${SECRET}`)).toBe('live');
    expect(keyMode(`trk_test_${SECRET}`)).toBe('test');
  });

  it.each([
    ['a wrong prefix', `trk_prod_${SECRET}`],
    ['an uppercase prefix', `TRK_LIVE_${SECRET}`],
    ['a missing underscore', `trk_live${SECRET}`],
    ['no prefix at all', SECRET],
    ['31 characters', `trk_live_${SECRET.slice(1)}`],
    ['33 characters', `trk_live_${SECRET}x`],
    ['the 64-hex-character variant the spec also mentions', `trk_live_${'a1'.repeat(32)}`],
    ['a hyphen', `trk_live_${SECRET.slice(1)}-`],
    ['an underscore', `trk_live_${SECRET.slice(1)}_`],
    ['a space', `trk_live_${SECRET.slice(1)} `],
    ['a trailing newline', `trk_live_${SECRET}\n`],
    ['a non-ASCII letter', `trk_live_${SECRET.slice(1)}é`],
    ['the empty string', ''],
  ])('rejects %s', (_, key) => {
    expect(keyMode(key)).toBeNull();
    expect(isWellFormedKey(key)).toBe(false);
  });

  it('generates well-formed keys of the requested mode, each different', () => {
    const keys = Array.from({ length: 200 }, () => generateKey('live'));
    for (const key of keys) expect(keyMode(key)).toBe('live');
    expect(keyMode(generateKey('test'))).toBe('test');
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('draws from the whole alphabet: upper case, lower case and digits', () => {
    const chars = new Set(Array.from({ length: 200 }, () => generateKey('live').slice(9)).join(''));
    expect(chars.size).toBe(62);
  });

  it('hashes with SHA-256 in lowercase hex', () => {
    expect(hashKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(hashKey(`trk_live_${SECRET}`)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('takes the first 16 characters as the prefix, which is shaped like one', () => {
    expect(keyPrefix(`trk_live_${SECRET}`)).toBe('trk_live_Ab3dE9x');
    expect(isKeyPrefix('trk_live_Ab3dE9x')).toBe(true);
    expect(isKeyPrefix('trk_live_Ab3dE9')).toBe(false);
    expect(isKeyPrefix(`trk_live_${SECRET}`)).toBe(false);
    expect(isKeyPrefix('trk_beta_Ab3dE9x')).toBe(false);
  });
});
