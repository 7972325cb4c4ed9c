/**
 * The README's rule for the sandbox's numbers: "The number's last two digits pick the sandbox's
 * story (…04 delivered, …00 not found)", starting from each carrier's `example_awb` of
 * `GET /v1/carriers`. Every example is its carrier's in-transit story (scenario 02 on lane 01), so
 * changing its last two digits tells the story they name, for every carrier.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectRecord, startApiHarness, type ApiHarness } from '../testutil/harness.ts';

const README = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');

describe("each carrier's example_awb follows the README's rule", () => {
  let h: ApiHarness;
  let key: string;
  let carriers: { slug: string; example_awb: string | null }[];

  beforeAll(async () => {
    h = await startApiHarness();
    key = (await h.createKey({ plan: 'starter', mode: 'test', burst_per_second: 100 })).key;
    carriers = ((await h.app.inject({ method: 'GET', url: '/v1/carriers', headers: { 'x-api-key': key } })).json() as { carriers: typeof carriers }).carriers;
  });
  afterAll(() => h.close());

  it('the README states the rule this test holds the examples to', () => {
    expect(README.replace(/\s+/g, ' ')).toContain("The number's last two digits pick the sandbox's story (`…04` delivered, `…05` a failed attempt, `…00` not found");
  });

  it('every example ends in lane 01, scenario 02, and is in transit', async () => {
    expect(carriers.length).toBeGreaterThanOrEqual(11);
    for (const { slug, example_awb: awb } of carriers) {
      // Its last four digits (India Post's S10 numbers end in letters: RK123450102IN).
      expect(awb, slug).toMatch(/0102\D*$/);
      const record = expectRecord(await h.track(key, slug, awb!));
      expect({ slug, status: record.status, stage: record.insights.current_stage }).toEqual({ slug, status: 'in_transit', stage: 'in_transit' });
    }
  });

  it('its last two digits changed tell the story they name: 04 delivered, 05 a failed attempt, 00 not found', async () => {
    for (const { slug, example_awb: awb } of carriers) {
      const other = (digits: string) => awb!.replace(/\d{2}(\D*)$/, `${digits}$1`);
      expect({ slug, status: expectRecord(await h.track(key, slug, other('04'))).status }).toEqual({ slug, status: 'delivered' });
      const failed = expectRecord(await h.track(key, slug, other('05')));
      expect({ slug, status: failed.status, attempts: failed.delivery_attempts.count }).toEqual({ slug, status: 'exception', attempts: 1 });
      expect({ slug, status: (await h.track(key, slug, other('00'))).statusCode }).toEqual({ slug, status: 404 });
    }
  });
});
