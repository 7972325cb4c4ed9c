/** Mutation fuzzing of carrier bodies: every parser must survive any of these without throwing. */
import { expect } from 'vitest';
import { CarrierPollSchema, requireAwb } from '../../../lib/schemas/index.ts';
import type { CarrierAdapter, NativeResponse } from '../../../lib/carriers/types.ts';
import { seededRandom } from '../../../lib/random/seeded-random.ts';

/** Deterministic, so a failing mutation can be reproduced from its seed. */
export const prng = seededRandom;

const GARBAGE = ['{', '}', '[', ']', '"', '<', '>', '</', '&', '\\', '\u0000', '\uFFFD', 'null', '-1', '1e999', 'NaN', '\r\n', ' : ', '<!--', ']]>'];

/** One mutated copy of `body`: truncations, deletions, insertions, duplications, swaps. */
export function mutate(body: string, random: () => number): string {
  const pick = (n: number) => Math.floor(random() * n);
  let out = body;
  const edits = 1 + pick(4);
  for (let i = 0; i < edits; i++) {
    const at = pick(out.length + 1);
    switch (pick(6)) {
      case 0: out = out.slice(0, at); break;
      case 1: out = out.slice(0, at) + out.slice(at + 1 + pick(20)); break;
      case 2: out = out.slice(0, at) + GARBAGE[pick(GARBAGE.length)] + out.slice(at); break;
      case 3: { const len = pick(40); out = out.slice(0, at) + out.slice(at, at + len) + out.slice(at); break; }
      case 4: { const other = pick(out.length + 1); out = out.slice(0, Math.min(at, other)) + out.slice(Math.max(at, other)); break; }
      default: out = out.slice(0, at) + String.fromCharCode(pick(0x3000)) + out.slice(at + 1);
    }
  }
  return out;
}

/** Bodies that are broken as a whole, whatever the carrier's format. */
export const BROKEN_BODIES = [
  '',
  ' ',
  'null',
  '[]',
  '{}',
  '<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>',
  '<?xml version="1.0"?><',
  '{"truncated": ',
  'Service Unavailable',
  '\u0000\u0001\u0002',
];

/**
 * Parses `count` mutations of `good` (plus the broken bodies): none may throw, and each result,
 * wrapped as a poll, must be a valid carrier_poll.v1.
 */
export function fuzzParser(adapter: CarrierAdapter, awb: string, good: NativeResponse, count = 2000, seed = 1): void {
  const random = prng(seed);
  const bodies = [...BROKEN_BODIES, ...Array.from({ length: count }, () => mutate(good.body, random))];
  for (const body of bodies) {
    let parsed;
    try {
      parsed = adapter.parse(requireAwb(awb), { ...good, body });
    } catch (err) {
      throw new Error(`${adapter.slug} parser threw on ${JSON.stringify(body.slice(0, 200))}: ${(err as Error).message}`, { cause: err });
    }
    const poll = {
      schema: 'carrier_poll.v1', poll_id: '00000000-0000-4000-8000-000000000000', carrier: adapter.slug, awb,
      polled_at: '2026-11-20T00:00:00.000Z', source: 'lookup', outcome: parsed.outcome,
      shipment: parsed.outcome === 'ok' ? parsed.shipment : null,
      scans: parsed.outcome === 'ok' ? parsed.scans : [],
      error: parsed.outcome === 'error' ? parsed.error : null,
    };
    const check = CarrierPollSchema.safeParse(poll);
    if (!check.success) {
      expect.fail(`${adapter.slug}: invalid poll from ${JSON.stringify(body.slice(0, 200))}: ${check.error.message}`);
    }
  }
}
