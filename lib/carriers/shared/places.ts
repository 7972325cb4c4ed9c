/** Origin and destination places as carriers write them. */
import { z } from 'zod';
import type { Location } from '../../schemas/index.ts';
import { nonEmpty } from './json-fields.ts';
import { optionalText } from './schema-fields.ts';

/** A six-digit pincode, or null. */
export function pincodeOf(value: string | null): string | null {
  const digits = value?.trim() ?? '';
  return /^\d{6}$/.test(digits) ? digits : null;
}

/** A place known by its city (or office) name and pincode; null when neither is given. */
export function cityPlace(city: string | null, pincode: string | null): Location | null {
  return city === null && pincode === null ? null : { city, state: null, pincode };
}

/** A `{city, state, pincode}` object; a wrong shape reads as absent. */
export const PlaceSchema = z
  .object({ city: optionalText, state: optionalText, pincode: z.union([z.string(), z.number()]).nullish().catch(null) })
  .nullish()
  .catch(null);

export function locationOf(place: z.infer<typeof PlaceSchema>): Location | null {
  if (!place) return null;
  const location = {
    city: nonEmpty(place.city),
    state: nonEmpty(place.state),
    pincode: place.pincode === null || place.pincode === undefined ? null : nonEmpty(String(place.pincode)),
  };
  return location.city || location.state || location.pincode ? location : null;
}
