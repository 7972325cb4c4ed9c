/** The model's place lookup over lib/places' directory: state codes and zones, zones memoised per prefix pair. */
import type { PlaceDirectory } from '../places/index.ts';
import type { PlaceLookup } from './types.ts';

export function placeLookupOf(directory: Pick<PlaceDirectory, 'placeOf' | 'zoneOf'>): PlaceLookup {
  const zones = new Map<string, string | null>();
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
  };
}
