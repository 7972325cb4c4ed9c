import type { Stage } from '../schemas/index.ts';
import type { CachedShipment } from './entry.ts';
import { DAY_MS } from '../time/index.ts';
import type { Awb, KeyMode } from '../schemas/index.ts';

/** Active shipments are re-polled once their cached copy is this old (decisions.md "Cache"). */
export const ACTIVE_FRESH_MS = 30 * 60_000;
/** "Not found" answers are remembered this long so a typo does not hammer carriers. */
export const NOT_FOUND_TTL_MS = 5 * 60_000;
/** Active records are kept past freshness so a carrier outage can be answered from the last copy. */
export const ACTIVE_RETENTION_MS = 30 * DAY_MS;

const TERMINAL_STAGES = new Set(['delivered', 'rto_delivered', 'cancelled']);

/**
 * One cached lookup: the shipment in compact form (lib/cache/entry.ts), or null when the carrier
 * said it has no such AWB.
 */
export interface CachedLookup {
  shipment: CachedShipment | null;
  polledAtMs: number;
}

/** A normalized or a cached shipment: both carry their facts. */
export function isTerminal(shipment: { facts: { stage: Stage } }): boolean {
  return TERMINAL_STAGES.has(shipment.facts.stage);
}

/** The same rule read off a tracking record's stage. */
export function isTerminalStage(stage: string): boolean {
  return TERMINAL_STAGES.has(stage);
}

/** How long the store keeps an entry; null = forever (terminal records). */
export function retentionMs(entry: CachedLookup): number | null {
  if (entry.shipment === null) return NOT_FOUND_TTL_MS;
  return isTerminal(entry.shipment) ? null : ACTIVE_RETENTION_MS;
}

/** Whether a cached entry may answer a lookup without polling the carrier again. */
export function isFresh(entry: CachedLookup, nowMs: number): boolean {
  const age = nowMs - entry.polledAtMs;
  if (entry.shipment === null) return age < NOT_FOUND_TTL_MS;
  return isTerminal(entry.shipment) || age < ACTIVE_FRESH_MS;
}

/** Cache key: mode (sandbox or live carriers: never mixed) + canonical slug + the AWB (upper case: lib/schemas/awb.ts). */
export function cacheKey(mode: KeyMode, carrier: string, awb: Awb): string {
  return `${mode}:${carrier}:${awb}`;
}
