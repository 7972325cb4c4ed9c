import { normalizePoll, type RuleSet } from '../normalize/index.ts';
import { storedAwb, type CarrierPoll } from '../schemas/index.ts';
import type { MappedEvent } from '../clickhouse/rows.ts';

/** The mapped events one poll gives under `rules` (none for a not-found, failed or unreadable poll). */
export function mappedEventsOf(poll: CarrierPoll, rules: RuleSet): MappedEvent[] {
  const result = normalizePoll(poll, rules);
  if (result.kind !== 'found') return [];
  const { carrier, awb, events } = result.shipment.record;
  return events.map((e) => ({ event_id: e.event_id, carrier, awb, status: e.status, code: e.code, reason_code: e.reason_code }));
}

/**
 * Events of many polls, one per event_id, the first poll that produced it winning: the normalizer's
 * writer stores an event once per mapping_version and skips it in later polls, so the first
 * producing poll is what a store written under these rules holds.
 */
export class EventSet {
  private readonly byId = new Map<string, MappedEvent>();
  private readonly shipmentKeys = new Set<string>();

  add(events: readonly MappedEvent[]): void {
    for (const e of events) {
      this.shipmentKeys.add(shipmentKeyOf(e));
      if (!this.byId.has(e.event_id)) this.byId.set(e.event_id, e);
    }
  }

  /** Marks a shipment as replayed even when its polls gave no events (not found, carrier error). */
  touch(carrier: string, awb: string): void {
    this.shipmentKeys.add(shipmentKeyOf({ carrier, awb }));
  }

  hasShipment(carrier: string, awb: string): boolean {
    return this.shipmentKeys.has(shipmentKeyOf({ carrier, awb }));
  }

  get events(): MappedEvent[] {
    return [...this.byId.values()];
  }

  /** Distinct (carrier, awb) of everything added. */
  get shipments(): { carrier: string; awb: string }[] {
    return [...this.shipmentKeys].map((k) => {
      const [carrier, awb] = k.split('\u0000') as [string, string];
      return { carrier, awb };
    });
  }
}

export function shipmentKeyOf(e: { carrier: string; awb: string }): string {
  return `${e.carrier}\u0000${storedAwb(e.awb)}`;
}
