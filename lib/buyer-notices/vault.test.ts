import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EmbeddedKv } from '../kv/index.ts';
import { ContactVault, contactKeyOf, seal, unseal } from './vault.ts';

describe('the contact vault', () => {
  let dir: string;
  let kv: EmbeddedKv;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'vault-'));
    kv = new EmbeddedKv(join(dir, 'kv'));
  });
  afterEach(async () => {
    await kv.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('makes its key once, mode 0600, and reads the same one after; a configured key wins; a bad one stops the start', async () => {
    const file = join(dir, 'contact-key');
    const made = contactKeyOf(undefined, file);
    expect(((await stat(file)).mode & 0o777).toString(8)).toBe('600');
    expect(contactKeyOf(undefined, file).equals(made)).toBe(true);
    const configured = randomBytes(32);
    expect(contactKeyOf(configured.toString('base64'), file).equals(configured)).toBe(true);
    expect(() => contactKeyOf('c2hvcnQ=', file)).toThrow(/32 bytes/);
    await writeFile(file, 'garbage\n');
    expect(() => contactKeyOf(undefined, file)).toThrow(/restore it from a backup/);
  });

  it('seals with authentication, bound to its watch: another watch, another key or a changed byte does not open it', () => {
    const key = randomBytes(32);
    const sealed = seal(key, { phone: '+919876543210', email: null }, 'trk_test_AAAAAAA|delhivery|1');
    expect(sealed).not.toContain('9876543210');
    expect(unseal(key, sealed, 'trk_test_AAAAAAA|delhivery|1')).toEqual({ phone: '+919876543210', email: null });
    expect(unseal(key, sealed, 'trk_test_AAAAAAA|delhivery|2')).toBeNull();
    expect(unseal(randomBytes(32), sealed, 'trk_test_AAAAAAA|delhivery|1')).toBeNull();
    const flipped = Buffer.from(sealed, 'base64url');
    flipped[flipped.length - 1]! ^= 1;
    expect(unseal(key, flipped.toString('base64url'), 'trk_test_AAAAAAA|delhivery|1')).toBeNull();
  });

  it('keeps nothing readable on disk: the journal holds the masked forms and ciphertext only', async () => {
    const vault = new ContactVault(kv, randomBytes(32));
    const view = await vault.put('trk_test_AAAAAAA', 'delhivery', '1234567890102', {
      channels: ['sms', 'email'], language: 'ta', contact: { phone: '+919123456789', email: 'priya.marker@example.com' },
    }, Date.now());
    expect(view).toEqual({ channels: ['sms', 'email'], language: 'ta', phone: '+91******6789', email: 'p***@example.com' });
    await kv.close();
    kv = new EmbeddedKv(join(dir, 'kv'));
    for (const name of await readdir(join(dir, 'kv'), { recursive: true })) {
      const text = await readFile(join(dir, 'kv', String(name))).catch(() => Buffer.alloc(0));
      expect(text.toString('latin1')).not.toContain('9123456789');
      expect(text.toString('latin1')).not.toContain('priya.marker');
    }
  });
});
