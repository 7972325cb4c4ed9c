/**
 * Pure: joins the office directory (office, district, state per office) and the coordinate table
 * (lat/lng per pincode) into one row per pincode, as the TSV lib/places reads.
 */
import { stateCodeOf } from '../calendar/states.ts';

export interface DirectoryRow { name: string; pincode: number | string; district: string; state: string }

export const PINCODE_TABLE_HEADER = 'pincode\toffice\tdistrict\tstate\tlat\tlng\tcoordinates';

/** India's bounding box: a few directory coordinates sit outside it (typos), and are not believed. */
function inIndia(lat: number, lng: number): boolean {
  return lat >= 6 && lat <= 37.5 && lng >= 68 && lng <= 97.5;
}

/**
 * Where neither the pincode nor its district or state has a coordinate in the table (Ladakh's
 * pincodes have none): the capital's, marked `capital`.
 */
const CAPITALS: Readonly<Record<string, { lat: number; lng: number }>> = { LA: { lat: 34.1526, lng: 77.5771 } };

/** Leh and Kargil became the union territory of Ladakh in 2019; the directory still files them under J&K. */
const LADAKH_DISTRICTS = new Set(['leh', 'kargil']);

function clean(text: string): string {
  return text.replace(/[\t\n\r]/g, ' ').replace(/\s+/g, ' ').trim();
}

/**
 * One line per pincode, sorted. The office is the first listed alphabetically (a pincode has several
 * post offices; any one names it). Coordinates: the pincode's own when believable (`own`), else the
 * mean of its district's (`district`), else its state's (`state`), else its capital's (`capital`).
 */
export function derivePincodeTable(offices: readonly DirectoryRow[], coordinates: Readonly<Record<string, { lat: number; lng: number }>>): string {
  const byPin = new Map<string, { office: string; district: string; state: string }>();
  for (const row of offices) {
    const pincode = String(row.pincode);
    if (!/^[1-9]\d{5}$/.test(pincode)) continue;
    const district = clean(row.district);
    const state = LADAKH_DISTRICTS.has(district.toLowerCase()) ? 'LA' : stateCodeOf(row.state);
    if (!state) continue;
    const office = clean(row.name);
    const seen = byPin.get(pincode);
    if (!seen || office < seen.office) byPin.set(pincode, { office, district, state });
  }
  const sums = new Map<string, { lat: number; lng: number; n: number }>();
  const add = (key: string, lat: number, lng: number) => {
    const sum = sums.get(key) ?? { lat: 0, lng: 0, n: 0 };
    sum.lat += lat; sum.lng += lng; sum.n += 1;
    sums.set(key, sum);
  };
  const own = new Map<string, { lat: number; lng: number }>();
  for (const [pincode, place] of byPin) {
    const c = coordinates[pincode];
    if (c && Number.isFinite(c.lat) && Number.isFinite(c.lng) && inIndia(c.lat, c.lng)) {
      own.set(pincode, c);
      add(`d:${place.state}:${place.district}`, c.lat, c.lng);
      add(`s:${place.state}`, c.lat, c.lng);
    }
  }
  const lines = [PINCODE_TABLE_HEADER];
  for (const pincode of [...byPin.keys()].sort()) {
    const place = byPin.get(pincode)!;
    let source = 'own';
    let c = own.get(pincode);
    if (!c) {
      const d = sums.get(`d:${place.state}:${place.district}`);
      const s = sums.get(`s:${place.state}`);
      const mean = d ?? s;
      if (mean) {
        source = d ? 'district' : 'state';
        c = { lat: mean.lat / mean.n, lng: mean.lng / mean.n };
      } else {
        c = CAPITALS[place.state];
        source = 'capital';
        if (!c) continue;
      }
    }
    lines.push([pincode, place.office, place.district, place.state, c.lat.toFixed(4), c.lng.toFixed(4), source].join('\t'));
  }
  return `${lines.join('\n')}\n`;
}
