import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EmbeddedKv } from '../kv/index.ts';
import { BrandingStore, parseBranding, type BrandingDoc } from './index.ts';
import { brandingKey } from './store.ts';

const doc = (name: string): BrandingDoc => {
  const parsed = parseBranding({ name, accent_color: '#1a73e8', frame_ancestors: ['https://shop.example.com'] });
  if (!parsed.ok) throw new Error(parsed.problems.join());
  return parsed.doc;
};

describe('BrandingStore (embedded journal)', () => {
  let dir: string;
  let kv: EmbeddedKv;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'branding-'));
    kv = new EmbeddedKv(dir);
  });
  afterEach(async () => {
    await kv.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps one document per key, under the key prefix as hash tag, across a reopen', async () => {
    const store = new BrandingStore(kv);
    expect(await store.get('trk_test_AAAAAAA')).toBeNull();
    await store.put('trk_test_AAAAAAA', doc('Shop A'));
    await store.put('trk_test_BBBBBBB', doc('Shop B'));
    await store.put('trk_test_AAAAAAA', doc('Shop A2'));
    expect(brandingKey('trk_test_AAAAAAA')).toBe('branding:{trk_test_AAAAAAA}');
    await kv.close();
    kv = new EmbeddedKv(dir);
    const reopened = new BrandingStore(kv);
    expect(await reopened.get('trk_test_AAAAAAA')).toEqual(doc('Shop A2'));
    expect(await reopened.get('trk_test_BBBBBBB')).toEqual(doc('Shop B'));
    await reopened.delete('trk_test_AAAAAAA');
    expect(await reopened.get('trk_test_AAAAAAA')).toBeNull();
    expect((await reopened.get('trk_test_BBBBBBB'))?.name).toBe('Shop B');
  });
});
