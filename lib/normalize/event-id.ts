/**
 * Event identity (contracts.md "ClickHouse"): an event_id is stable per carrier + AWB + time + raw
 * status + location, so the same scan always gets the same id and two scans at one instant with one
 * raw status but different places get two.
 *
 * Built in two steps on purpose: the first (`legacyEventId`) is the id events had before location
 * was part of it (24 hex); the id is sha1(legacy id | location) cut to 32 hex. So ClickHouse can
 * re-key rows stored under the old id from their own columns (migration 0013:
 * `SHA1(concat(event_id, '|', location))`), and the two generations tell apart by length.
 */
import { hash } from 'node:crypto';
import { cleanText } from './text.ts';

export const EVENT_ID_LENGTH = 32;
const LEGACY_EVENT_ID_LENGTH = 24;

/** The pre-location id: carrier | AWB (trimmed, uppercased) | epoch ms | cleaned raw status. */
export function legacyEventId(carrier: string, awb: string, ms: number, rawStatus: string): string {
  return hash('sha1', `${carrier}|${awb}|${ms}|${cleanText(rawStatus)}`).slice(0, LEGACY_EVENT_ID_LENGTH);
}

/** The id from the legacy id and the event's `location` as stored and answered (redacted, cleaned). */
export function eventIdFromLegacy(legacyId: string, location: string): string {
  return hash('sha1', `${legacyId}|${location}`).slice(0, EVENT_ID_LENGTH);
}

export function eventId(carrier: string, awb: string, ms: number, rawStatus: string, location: string): string {
  return eventIdFromLegacy(legacyEventId(carrier, awb, ms, rawStatus), location);
}

/** True for an id written before location was part of the identity (still in watch snapshots). */
export function isLegacyEventId(id: string): boolean {
  return id.length === LEGACY_EVENT_ID_LENGTH;
}
