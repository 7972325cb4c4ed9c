/**
 * The model's place lookup over lib/places' directory: state codes and zones (zones memoised per
 * prefix pair), and the names index the position resolver reads (position.ts), built when first asked.
 */
import { stateCodeOf } from '../calendar/index.ts';
import type { PlaceDirectory } from '../places/index.ts';
import { buildPlaceNames, type PlaceNames } from './position.ts';
import type { PlaceLookup } from './types.ts';

export function placeLookupOf(directory: Pick<PlaceDirectory, 'placeOf' | 'zoneOf' | 'all'>): PlaceLookup {
  const zones = new Map<string, string | null>();
  let names: PlaceNames | null = null;
  return {
    stateOf: (pincode) => directory.placeOf(pincode)?.stateCode ?? null,
    zoneOf(origin, destination) {
      const key = `${origin}${destination}`;
      let zone = zones.get(key);
      if (zone === undefined) {
        const o = directory.placeOf(origin);
        const d = directory.placeOf(destination);
        zone = o && d ? directory.zoneOf(o, d) : null;
        zones.set(key, zone);
      }
      return zone;
    },
    get names() {
      names ??= buildPlaceNames(directory.all(), stateCodeOf);
      return names;
    },
  };
}
