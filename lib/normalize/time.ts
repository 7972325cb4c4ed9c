/** Carrier times without an offset are India Standard Time (decisions.md "Time"). */
const IST_OFFSET = '+05:30';
const HAS_OFFSET = /(Z|[+-]\d{2}:?\d{2})$/;

/** Epoch milliseconds of an ISO 8601 date-time; offset-less values are read as IST. NaN when invalid. */
export function parseCarrierTime(iso: string): number {
  const withOffset = HAS_OFFSET.test(iso) ? iso : iso + IST_OFFSET;
  return Date.parse(withOffset);
}

/** UTC ISO 8601 with milliseconds, the only timestamp form the API returns. */
export function toUtcIso(ms: number): string {
  return new Date(ms).toISOString();
}

export function toUtcIsoOrNull(ms: number | null): string | null {
  return ms === null || Number.isNaN(ms) ? null : new Date(ms).toISOString();
}

export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

/** Rounds to one decimal, as the spec's examples show (transit days, hours since last scan). */
export function round1(value: number): number {
  return Math.round(value * 10) / 10;
}
