export { distanceKm, districtKey, isSpecial, ZONES, type Place, type Regions, type Zone } from './places.ts';
export { loadPlaces, loadRegions, placeOf, RegionsFileSchema, type PlaceDirectory } from './load.ts';
import { loadPlaces } from './load.ts';
import type { Place, Zone } from './places.ts';

/** The courier zone of a lane, with the default config's regions (config/places/regions.yaml). */
export function zoneOf(origin: Place, destination: Place): Zone {
  return loadPlaces().zoneOf(origin, destination);
}
