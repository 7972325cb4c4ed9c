import type { Location } from '../schemas/index.ts';

const PINCODE = /^\d{6}$/;

/** Lane key: carrier + first three digits of both pincodes; null unless both are valid pincodes. */
export function laneOf(carrier: string, origin: Location | null, destination: Location | null): string | null {
  const from = origin?.pincode?.trim();
  const to = destination?.pincode?.trim();
  if (!from || !to || !PINCODE.test(from) || !PINCODE.test(to)) return null;
  return `${carrier}:${from.slice(0, 3)}:${to.slice(0, 3)}`;
}
