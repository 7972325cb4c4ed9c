/** Shipment weights as carriers write them, in grams. */

const MAX_WEIGHT_GRAMS = 1_000_000_000;

/** "0.75" kilograms → 750; null when not a positive number. */
export function kilogramsToGrams(kg: string | null): number | null {
  const n = kg === null ? NaN : Number.parseFloat(kg);
  return Number.isFinite(n) && n > 0 ? Math.round(n * 1000) : null;
}

/** "500" or "500.00" grams → 500; null when not a plain number or beyond any real parcel. */
export function gramsOf(value: string | null): number | null {
  if (value === null || !/^\d+(?:\.\d+)?$/.test(value)) return null;
  const grams = Math.round(Number(value));
  return Number.isFinite(grams) && grams <= MAX_WEIGHT_GRAMS ? grams : null;
}
