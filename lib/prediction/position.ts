/**
 * Where the parcel is (contracts.md "Delivery prediction", position): the latest scan's place,
 * read from its location text (every carrier writes it differently: `Mumbai_Hub (Maharashtra)`,
 * `KOLKATA DANKUNI HUB`, `Bengaluru, Karnataka`, `BOM/BWD, Bhiwandi, Maharashtra`, post offices'
 * `Pune City H.O`) against the places directory, relative to the shipment's origin and destination.
 * Pure: the name index is built from the directory's rows handed in.
 *
 * Reading a text. Its words are matched against, in this order of trust: district names and the
 * common city names below (`Bengaluru`, `Trichy`; leftmost wins: `KOLKATA DANKUNI HUB` is Kolkata's
 * hub), then post-office names of one district (`Bhiwandi`), then the three-letter city codes
 * carriers prefix (`BLR`, `BOM`). A state name in the text (`(Punjab)`, `, Maharashtra`) both
 * filters those and, alone, places the scan in that state. A name known in several districts is
 * no answer; no name at all is `unknown`: never a guess.
 */

import { POSITIONS, type Position } from '../schemas/position.ts';

/** The positions, in the order their codes (the index) are stored. */
export { POSITIONS, type Position };
export const POSITION_COUNT = POSITIONS.length;
const POSITION_INDEX = new Map<Position, number>(POSITIONS.map((p, i) => [p, i]));
export const positionIndexOf = (p: Position): number => POSITION_INDEX.get(p)!;

/** A place a text or a pincode names: its state code and, when named, its city (the district; Delhi is one city). */
export interface NamedPlace {
  state: string;
  city: string | null;
}

/** One row of the places directory, as the index needs it. */
export interface PlaceRow {
  pincode: string;
  office: string;
  district: string;
  stateCode: string;
}

export interface PlaceNames {
  /** The place a location text names, null when none of its names is known. */
  placeOfText(text: string): NamedPlace | null;
  placeOfPincode(pincode: string): NamedPlace | null;
  /** A state written any common way → its code (lib/calendar's reading). */
  stateOf(text: string): string | null;
}

/** Common names of cities the directory spells another way (its districts are India Post's). */
const CITY_NAMES: Readonly<Record<string, [string, string]>> = {
  bengaluru: ['KA', 'Bangalore'], bangaluru: ['KA', 'Bangalore'], bombay: ['MH', 'Mumbai'], 'navi mumbai': ['MH', 'Thane'],
  navimumbai: ['MH', 'Thane'], madras: ['TN', 'Chennai'], calcutta: ['WB', 'Kolkata'], secunderabad: ['TG', 'Hyderabad'],
  gurugram: ['HR', 'Gurgaon'], trichy: ['TN', 'Tiruchirappalli'], tiruchy: ['TN', 'Tiruchirappalli'], vizag: ['AP', 'Visakhapatnam'],
  mysuru: ['KA', 'Mysore'], hubballi: ['KA', 'Dharwad'], hubli: ['KA', 'Dharwad'], bhubaneswar: ['OR', 'Khorda'],
  bhubaneshwar: ['OR', 'Khorda'], cochin: ['KL', 'Ernakulam'], kochi: ['KL', 'Ernakulam'], puducherry: ['PY', 'Pondicherry'],
  delhi: ['DL', 'Delhi'], 'new delhi': ['DL', 'Delhi'], ncr: ['DL', 'Delhi'], noida: ['UP', 'Gautam Buddha Nagar'],
  'greater noida': ['UP', 'Gautam Buddha Nagar'], jamshedpur: ['JH', 'East Singhbhum'], guwahati: ['AS', 'Kamrup'], vijayawada: ['AP', 'Krishna'],
  mangaluru: ['KA', 'Dakshina Kannada'],
  mangalore: ['KA', 'Dakshina Kannada'], belagavi: ['KA', 'Belgaum'], kalaburagi: ['KA', 'Gulbarga'], prayagraj: ['UP', 'Allahabad'],
  // Cities no district is named after, or whose name starts two districts' (Imphal West and East, Kanpur Nagar and Dehat):
  // the district that holds the city's centre.
  imphal: ['MN', 'Imphal West'], kanpur: ['UP', 'Kanpur Nagar'], shillong: ['ML', 'East Khasi Hills'], itanagar: ['AR', 'Papum Pare'],
  panaji: ['GA', 'North Goa'], panjim: ['GA', 'North Goa'], 'port blair': ['AN', 'South Andaman'], trivandrum: ['KL', 'Thiruvananthapuram'],
  siliguri: ['WB', 'Darjiling'], durgapur: ['WB', 'Bardhaman'], asansol: ['WB', 'Bardhaman'], bhilai: ['CT', 'Durg'], hosur: ['TN', 'Krishnagiri'],
  rishikesh: ['UT', 'Dehradun'], silchar: ['AS', 'Cachar'], tezpur: ['AS', 'Sonitpur'], leh: ['LA', 'Leh'],
};

/** Three-letter city codes carriers prefix to facility names (airport codes, mostly). */
const CITY_CODES: Readonly<Record<string, [string, string]>> = {
  blr: ['KA', 'Bangalore'], bom: ['MH', 'Mumbai'], del: ['DL', 'Delhi'], maa: ['TN', 'Chennai'], ccu: ['WB', 'Kolkata'],
  hyd: ['TG', 'Hyderabad'], amd: ['GJ', 'Ahmedabad'], pnq: ['MH', 'Pune'], lko: ['UP', 'Lucknow'], jai: ['RJ', 'Jaipur'],
  cok: ['KL', 'Ernakulam'], ixc: ['CH', 'Chandigarh'], pat: ['BR', 'Patna'], gau: ['AS', 'Kamrup'], nag: ['MH', 'Nagpur'],
};

/** Words of facility names that never name a place (and short district names that collide with them). */
const NOT_PLACES = new Set([
  'hub', 'apex', 'surface', 'gateway', 'facility', 'city', 'road', 'center', 'centre', 'central', 'north', 'south', 'east', 'west',
  'main', 'dc', 'fc', 'nsh', 'warehouse', 'sort', 'sorting', 'processing', 'branch', 'office', 'delivery', 'station', 'bazar', 'market',
  'colony', 'nagar', 'industrial', 'estate', 'area', 'camp', 'post', 'head', 'sub', 'gpo', 'rto', 'na', 'new', 'old',
]);

const MAX_WORDS = 3;
/** Post-office suffixes (H.O, S.O, B.O, G.P.O), dropped from office names before indexing. */
const OFFICE_SUFFIX = /\s+(?:h\.?\s?o|s\.?\s?o|b\.?\s?o|g\.?\s?p\.?\s?o)\.?$/i;

const wordsOf = (text: string): string[] => text.toLowerCase().replaceAll('&', ' and ').split(/[^a-z]+/).filter((w) => w.length > 0);
const cityKey = (state: string, district: string): string => (state === 'DL' ? 'DL:delhi' : `${state}:${district.toLowerCase()}`);

/** A name's places; several means the name alone does not say which. */
type Entry = NamedPlace[];

function add(index: Map<string, Entry>, name: string, place: NamedPlace): void {
  const words = wordsOf(name);
  if (words.length === 0 || words.length > MAX_WORDS) return;
  if (words.length === 1 && (words[0]!.length < 4 || NOT_PLACES.has(words[0]!))) return;
  const key = words.join(' ');
  const entry = index.get(key);
  if (!entry) index.set(key, [place]);
  else if (!entry.some((p) => p.state === place.state && p.city === place.city)) entry.push(place);
}

/** The names index over the directory's rows; `stateOf` reads state names (lib/calendar's stateCodeOf). */
export function buildPlaceNames(rows: Iterable<PlaceRow>, stateOf: (text: string) => string | null): PlaceNames {
  const districts = new Map<string, Entry>();
  const offices = new Map<string, Entry>();
  const codes = new Map<string, Entry>();
  const byPincode = new Map<string, NamedPlace>();
  for (const row of rows) {
    const place = { state: row.stateCode, city: cityKey(row.stateCode, row.district) };
    byPincode.set(row.pincode, place);
    add(districts, row.district, place);
    add(offices, row.office.replace(OFFICE_SUFFIX, ''), place);
  }
  for (const [name, [state, district]] of Object.entries(CITY_NAMES)) {
    districts.set(wordsOf(name).join(' '), [{ state, city: cityKey(state, district) }]);
  }
  for (const [code, [state, district]] of Object.entries(CITY_CODES)) codes.set(code, [{ state, city: cityKey(state, district) }]);
  const memo = new Map<string, NamedPlace | null>();

  function stateIn(words: readonly string[]): string | null {
    for (let n = 4; n >= 1; n--) {
      for (let i = 0; i + n <= words.length; i++) {
        const name = words.slice(i, i + n).join('');
        if (name.length < 4) continue;
        const state = stateOf(name);
        if (state) return state;
      }
    }
    return null;
  }

  /** The leftmost (then longest) name of `index` in `words` that fits `state`; null when none, or the name is ambiguous. */
  function cityIn(words: readonly string[], index: Map<string, Entry>, state: string | null): NamedPlace | null {
    for (let i = 0; i < words.length; i++) {
      for (let n = Math.min(MAX_WORDS, words.length - i); n >= 1; n--) {
        const entry = index.get(words.slice(i, i + n).join(' '));
        if (!entry) continue;
        const fits = state === null ? entry : entry.filter((p) => p.state === state);
        if (fits.length === 1) return fits[0]!;
        if (fits.length > 1) return fits.every((p) => p.state === fits[0]!.state) ? { state: fits[0]!.state, city: null } : null;
      }
    }
    return null;
  }

  function read(text: string): NamedPlace | null {
    const words = wordsOf(text);
    if (words.length === 0) return null;
    const state = stateIn(words);
    const named = cityIn(words, districts, state) ?? cityIn(words, offices, state) ?? cityIn(words, codes, state);
    if (named) return named;
    return state === null ? null : { state, city: null };
  }

  return {
    placeOfText(text) {
      let found = memo.get(text);
      if (found === undefined) {
        found = read(text);
        if (memo.size > 100_000) memo.clear();
        memo.set(text, found);
      }
      return found;
    },
    placeOfPincode: (pincode) => byPincode.get(pincode.trim()) ?? null,
    stateOf,
  };
}

/** A post office (H.O, S.O, B.O) or a carrier's delivery centre (Delhivery's `_D`): where parcels go out for delivery. */
const BRANCH_MARK = /(?:^|[\s_(])(?:[hsb]\.\s?o\.?|[hsb]o)(?:$|[\s)])|_D(?:$|[\s(])|\bbranch\b|\bdelivery cent(?:er|re)\b/i;
export const isBranchText = (text: string): boolean => BRANCH_MARK.test(text);

/** The shipment's ends as a record gives them: pincode, else the city and state texts. */
export interface ShipmentEnd {
  pincode: string | null;
  city: string | null;
  state: string | null;
}

export function placeOfEnd(end: ShipmentEnd | null, names: PlaceNames): NamedPlace | null {
  if (!end) return null;
  const byPin = end.pincode && /^\d{6}$/.test(end.pincode.trim()) ? names.placeOfPincode(end.pincode) : null;
  if (byPin) return byPin;
  const state = end.state ? names.stateOf(end.state) : null;
  const byCity = end.city ? names.placeOfText(end.state ? `${end.city}, ${end.state}` : end.city) : null;
  if (byCity && (state === null || byCity.state === state)) return byCity;
  return state === null ? null : { state, city: null };
}

/**
 * The position of a scan at `place` (null: its text names nothing known). `branch`: `sent` when
 * this shipment was sent out for delivery from that very place (its out-for-delivery scans), `named`
 * when the text names a branch (a post office, a delivery centre), which counts in the destination city.
 */
export function positionOf(
  place: NamedPlace | null, origin: NamedPlace | null, destination: NamedPlace | null, branch: 'sent' | 'named' | null = null,
): Position {
  if (branch === 'sent') return 'delivering_branch';
  if (place === null || destination === null) {
    return place !== null && origin?.city != null && place.city === origin.city ? 'origin' : 'unknown';
  }
  if (place.city !== null && place.city === destination.city) return branch === 'named' ? 'delivering_branch' : 'destination_city';
  if (place.city !== null && origin?.city != null && place.city === origin.city) return 'origin';
  if (place.state === destination.state) return 'destination_state';
  // Elsewhere: en route, when it is known not to be the origin (without the origin, it may well be there).
  if (origin === null) return 'unknown';
  if (place.state !== origin.state || (place.city !== null && origin.city !== null)) return 'en_route';
  return 'unknown';
}

/** A scan as the resolver reads it (a record's event, oldest first). */
export interface PositionScan {
  ms: number;
  /** The scan's location text (the facility's name when the carrier gives one). */
  text: string;
  /** The scan sent the parcel out for delivery or tried to deliver it: its place is the delivering branch. */
  delivering: boolean;
}

/**
 * The position after each scan, oldest first (codes: POSITIONS' indexes). A scan at a place this
 * shipment was already sent out for delivery from (or an out-for-delivery scan itself) is at the
 * delivering branch.
 */
export function scanPositions(scans: readonly PositionScan[], origin: ShipmentEnd | null, destination: ShipmentEnd | null, names: PlaceNames): Uint8Array {
  const from = placeOfEnd(origin, names);
  const to = placeOfEnd(destination, names);
  const branches = new Set<string>();
  const out = new Uint8Array(scans.length);
  scans.forEach((scan, i) => {
    const text = scan.text.trim();
    if (scan.delivering && text) branches.add(text.toLowerCase());
    const place = text ? names.placeOfText(text) : null;
    const branch = text === '' ? null : branches.has(text.toLowerCase()) ? 'sent' : isBranchText(text) ? 'named' : null;
    out[i] = positionIndexOf(positionOf(place, from, to, branch));
  });
  return out;
}
