import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EmbeddedKv } from '../kv/index.ts';
import { BrandingStore, logoVersionOf, parseBranding, type BrandingDoc } from './index.ts';
import { brandingKey, logoKey } from './store.ts';
import { pngOf } from './testutil/images.ts';

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

  it('keeps the logo apart: a page reads the document with the logo\'s version, the logo on its own; null or delete removes it', async () => {
    const store = new BrandingStore(kv);
    const logo = `data:image/png;base64,${pngOf().toString('base64')}`;
    await store.put('trk_test_CCCCCCC', { ...doc('Shop C'), logo });
    expect(await store.get('trk_test_CCCCCCC')).toEqual({ ...doc('Shop C'), logo });
    const { logo: _bytes, ...rest } = doc('Shop C');
    expect(await store.forPage('trk_test_CCCCCCC')).toEqual({ ...rest, logo_version: logoVersionOf(logo) });
    expect(logoVersionOf(logo)).toMatch(/^[0-9a-f]{12}$/);
    expect(await store.logo('trk_test_CCCCCCC')).toBe(logo);
    expect(await kv.get(logoKey('trk_test_CCCCCCC'))).toBe(logo);

    await store.put('trk_test_CCCCCCC', doc('Shop C'));
    expect(await store.get('trk_test_CCCCCCC')).toEqual(doc('Shop C'));
    expect(await store.forPage('trk_test_CCCCCCC')).toMatchObject({ logo_version: null });
    expect(await store.logo('trk_test_CCCCCCC')).toBeNull();

    await store.put('trk_test_CCCCCCC', { ...doc('Shop C'), logo });
    await store.delete('trk_test_CCCCCCC');
    expect(await store.forPage('trk_test_CCCCCCC')).toBeNull();
    expect(await store.logo('trk_test_CCCCCCC')).toBeNull();
  });
});
