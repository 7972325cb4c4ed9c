/**
 * Pure: places (pincodes with office, district, state and coordinates), the great-circle distance
 * between them, and the courier zone of a lane. The data arrives as arguments (see load.ts).
 */

export interface Place {
  pincode: string;
  /** One post office of the pincode (a pincode has several; any one names it). */
  office: string;
  district: string;
  /** The state's name as this product writes it (lib/calendar stateNameOf). */
  state: string;
  /** Two-letter state code of date-holidays (lib/calendar stateCodeOf): what the calendar takes. */
  stateCode: string;
  lat: number;
  lng: number;
  /** Out of the usual delivery area: North-East, J&K, Ladakh, islands, listed hill districts. */
  remote: boolean;
  metro: boolean;
}

export type Zone = 'within_city' | 'within_state' | 'metro_to_metro' | 'rest_of_india' | 'special';
export const ZONES: readonly Zone[] = ['within_city', 'within_state', 'metro_to_metro', 'rest_of_india', 'special'];

export interface Regions {
  metroStates: ReadonlySet<string>;
  /** `STATE:district` keys, district lower case. */
  metroDistricts: ReadonlySet<string>;
  specialStates: ReadonlySet<string>;
  remoteDistricts: ReadonlySet<string>;
}

export function districtKey(stateCode: string, district: string): string {
  return `${stateCode}:${district.toLowerCase()}`;
}

const EARTH_RADIUS_KM = 6371.0088;
const RAD = Math.PI / 180;

/** Great-circle (haversine) distance in km. */
export function distanceKm(a: { lat: number; lng: number }, b: { lat: number; lng: number }): number {
  const dLat = (b.lat - a.lat) * RAD;
  const dLng = (b.lng - a.lng) * RAD;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.lat * RAD) * Math.cos(b.lat * RAD) * Math.sin(dLng / 2) ** 2;
  return 2 * EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** Special regions (North-East, J&K, Ladakh, islands): a zone of their own on couriers' rate cards. */
export function isSpecial(place: Pick<Place, 'stateCode'>, regions: Regions): boolean {
  return regions.specialStates.has(place.stateCode);
}

function sameCity(a: Place, b: Place): boolean {
  if (a.stateCode !== b.stateCode) return false;
  // Delhi's nine districts are one city for couriers.
  if (a.metro && b.metro && (a.stateCode === 'DL' || a.district === b.district)) return true;
  return a.district === b.district;
}

/**
 * The lane's zone as Indian couriers' rate cards draw them (A–E): within city (same district; Delhi
 * is one city), special (either end in the North-East, J&K, Ladakh or the islands), within state,
 * metro to metro, rest of India: the first that applies.
 */
export function zoneOf(origin: Place, destination: Place, regions: Regions): Zone {
  if (sameCity(origin, destination)) return 'within_city';
  if (isSpecial(origin, regions) || isSpecial(destination, regions)) return 'special';
  if (origin.stateCode === destination.stateCode) return 'within_state';
  if (origin.metro && destination.metro) return 'metro_to_metro';
  return 'rest_of_india';
}

/** Parses one line of config/places/pincodes.tsv into a Place. */
export function parsePlaceLine(line: string, regions: Regions, stateName: (code: string) => string | null): Place | null {
  const [pincode, office, district, stateCode, lat, lng] = line.split('\t');
  if (!pincode || !office || !district || !stateCode || !lat || !lng) return null;
  const key = districtKey(stateCode, district);
  return {
    pincode, office, district, stateCode, state: stateName(stateCode) ?? stateCode,
    lat: Number(lat), lng: Number(lng),
    remote: regions.specialStates.has(stateCode) || regions.remoteDistricts.has(key),
    metro: regions.metroStates.has(stateCode) || regions.metroDistricts.has(key),
  };
}
