import { storedAwb, type KeyMode } from '../schemas/index.ts';
/**
 * Names of push's documents in the state store. Every document of one API key carries the key
 * prefix as a hash tag (`{trk_test_Ab3dE9x}`), so with Redis each atomic step touches one slot.
 */
export const pushKeys = {
  watch: (prefix: string, carrier: string, awb: string) => `watch:{${prefix}}:${carrier}:${awb}`,
  /** The same, from an index entry `carrier:AWB`. */
  watchOf: (prefix: string, name: string) => `watch:{${prefix}}:${name}`,
  watchIndex: (prefix: string) => `watches:{${prefix}}`,
  /** Per shipment: who watches it, until when, and what the poller needs. */
  shipment: (shipmentId: string) => `shipment:{${shipmentId}}`,
  /** Every watched shipment id (`mode:carrier:awb`): the poller's list. */
  watched: () => 'watched',
  /** Watches whose outbox holds events not yet handed to the event log. */
  outboxPending: () => 'outbox-pending',
  endpoint: (prefix: string, id: string) => `endpoint:{${prefix}}:${id}`,
  endpointIndex: (prefix: string) => `endpoints:{${prefix}}`,
  event: (prefix: string, id: string) => `event:{${prefix}}:${id}`,
  queue: (prefix: string, endpointId: string, shipment: string) => `queue:{${prefix}}:${endpointId}:${shipment}`,
  /** The shipments with a queue at an endpoint (for enabling it again). */
  queueIndex: (prefix: string, endpointId: string) => `queues:{${prefix}}:${endpointId}`,
  attempts: (prefix: string, endpointId: string) => `attempts:{${prefix}}:${endpointId}`,
  /** The global schedule of queues with a delivery due: members `prefix|endpoint|shipment`. */
  due: () => 'due',
  /** An attempt's webhook_deliveries row, from before the send until ClickHouse has it. */
  attemptRow: (prefix: string, rowId: string) => `attempt-row:{${prefix}}:${rowId}`,
  /** Rows not yet confirmed in ClickHouse, due for the reconciler: members `prefix|rowId`. */
  attemptRowsDue: () => 'attempt-rows-due',
} as const;

export const shipmentIdOf = (mode: string, carrier: string, awb: string) => `${mode}:${carrier}:${storedAwb(awb)}`;

export function parseShipmentId(id: string): { mode: KeyMode; carrier: string; awb: string } | null {
  const [mode, carrier, awb] = id.split(':');
  if ((mode !== 'test' && mode !== 'live') || !carrier || !awb) return null;
  return { mode, carrier, awb };
}

export const dueMember = (prefix: string, endpointId: string, shipment: string) => `${prefix}|${endpointId}|${shipment}`;

export function parseDueMember(member: string): { prefix: string; endpointId: string; shipment: string } | null {
  const [prefix, endpointId, ...rest] = member.split('|');
  if (!prefix || !endpointId || rest.length === 0) return null;
  return { prefix, endpointId, shipment: rest.join('|') };
}
