import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EmbeddedKv } from '../kv/index.ts';
import { PageLinks, type PageTarget } from './page-links.ts';

let dir: string;
let kv: EmbeddedKv;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'page-links-'));
  kv = new EmbeddedKv(dir);
});
afterEach(async () => {
  await kv.close();
  rmSync(dir, { recursive: true, force: true });
});

const shipment: PageTarget = { kind: 'shipment', prefix: 'trk_test_Ab3dE9x', mode: 'test', carrier: 'delhivery', awb: '1234567890102', watched_since_ms: 1_000 };
const order: PageTarget = { kind: 'order', prefix: 'trk_test_Ab3dE9x', mode: 'test', order_id: 'ORD-1' };

describe('tracking page links', () => {
  it('a registered token opens its target; the same target always has the same token, another target another', async () => {
    const links = new PageLinks(kv);
    const token = await links.register(shipment);
    expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(await links.resolve(token)).toEqual(shipment);
    expect(await links.tokenOf(shipment)).toBe(token);
    const others = await Promise.all([
      links.tokenOf({ ...shipment, watched_since_ms: 2_000 }),
      links.tokenOf({ ...shipment, prefix: 'trk_test_Zz9yY8x' }),
      links.tokenOf({ ...shipment, awb: '1234567890103' }),
      links.register(order),
    ]);
    expect(new Set([token, ...others]).size).toBe(5);
    expect(await links.resolve(others[3]!)).toEqual(order);
  });

  it('a computed but never registered token, a changed one and a malformed one open nothing', async () => {
    const links = new PageLinks(kv);
    const unregistered = await links.tokenOf(shipment);
    expect(await links.resolve(unregistered)).toBeNull();
    const token = await links.register(shipment);
    const flipped = `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`;
    for (const bad of [flipped, token.slice(1), `${token}x`, '../../etc/passwd', '']) expect(await links.resolve(bad)).toBeNull();
  });

  it('the store holds no token, only its hash; the secret is made once and shared by every process on the store', async () => {
    const first = new PageLinks(kv);
    const token = await first.register(shipment);
    const second = new PageLinks(kv);
    expect(await second.tokenOf(shipment)).toBe(token);
    await kv.close();
    const reopened = new EmbeddedKv(dir);
    try {
      expect(await new PageLinks(reopened).tokenOf(shipment)).toBe(token);
      // Nothing on disk holds the token itself: a copy of the files is no working link without the secret's use.
      const files = readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
      expect(files.length).toBeGreaterThan(0);
      for (const file of files) expect(readFileSync(join(file.parentPath, file.name), 'utf8')).not.toContain(token);
    } finally {
      await reopened.close();
    }
    kv = new EmbeddedKv(dir);
  });

  it('an order lists the watches added to it, and not those removed', async () => {
    const links = new PageLinks(kv);
    await links.addToOrder('trk_test_Ab3dE9x', 'ORD-1', 'delhivery', 'A1');
    await links.addToOrder('trk_test_Ab3dE9x', 'ORD-1', 'bluedart', 'B2');
    await links.addToOrder('trk_test_Zz9yY8x', 'ORD-1', 'ekart', 'C3');
    await links.removeFromOrder('trk_test_Ab3dE9x', 'ORD-1', 'bluedart', 'B2');
    expect(await links.orderMembers('trk_test_Ab3dE9x', 'ORD-1')).toEqual(['delhivery:A1']);
  });
});
