/**
 * Issue 35: over every body the project keeps (the copies of ../shared/spec/real-bodies and the
 * bodies written in their shape), no event maps to `unknown`: each of their texts and codes says
 * what happened. The same figures per carrier are printed by `npm run bench -- mapping`.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CORPUS, REAL_BODIES_DIR, corpusText, fixtureFilesOnDisk, mappingShares, unknownPercent } from '../testutil/carrier-corpus.ts';
import { product } from '../testutil/product.ts';

describe('the carrier body corpus maps without unknown events', () => {
  it('lists every fixture body on disk', () => {
    expect([...new Set(CORPUS.map((b) => `${b.carrier}/${b.file}`))].sort()).toEqual(fixtureFilesOnDisk());
  });

  it('holds a copy of every real body of the shared specification (where it is present)', () => {
    if (!existsSync(REAL_BODIES_DIR)) return;
    const copies = new Set(CORPUS.map((b) => corpusText(b)));
    const missing: string[] = [];
    for (const carrier of readdirSync(REAL_BODIES_DIR, { withFileTypes: true })) {
      if (!carrier.isDirectory()) continue;
      for (const file of readdirSync(new URL(`${carrier.name}/`, REAL_BODIES_DIR))) {
        if (!copies.has(readFileSync(new URL(`${carrier.name}/${file}`, REAL_BODIES_DIR), 'utf8'))) missing.push(`${carrier.name}/${file}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('every carrier\'s events map: 0 % unknown', () => {
    const shares = mappingShares(product.rules);
    expect(shares.map((s) => s.carrier).sort()).toEqual(Object.keys(product.config.mappings.carriers).sort());
    expect(shares.flatMap((s) => s.unknown)).toEqual([]);
    expect(shares.every((s) => s.events > 0 && unknownPercent(s) === 0)).toBe(true);
  });
});
