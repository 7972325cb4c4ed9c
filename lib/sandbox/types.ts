import type { NdrReason } from '../schemas/index.ts';

/**
 * A carrier-neutral step of a sandbox shipment's story. Each carrier's renderer writes it in that
 * carrier's own vocabulary (see config/mappings/<slug>.yaml for texts the product maps).
 */
export type StepKind =
  | 'booked'          // manifested / order created: before pickup
  | 'picked_up'
  | 'hub_in'          // received / arrived at a hub
  | 'hub_out'         // dispatched / despatched from a hub
  | 'bagged'
  | 'out_for_delivery'
  | 'attempt_failed'  // failed delivery attempt; `ndr` says why, `remark` is the carrier's words
  | 'delivered'
  | 'hold'            // carrier-side hold (weather, delay): NDR other, shipment keeps moving
  | 'rto_initiated'
  | 'rto_in_transit'
  | 'rto_delivered'
  | 'cancelled'       // seller cancelled before pickup
  | 'lost'
  | 'unmapped';       // a text no mapping rule knows

export interface SandboxStep {
  kind: StepKind;
  /** Epoch ms of the scan. */
  at: number;
  /** City / facility name of the scan. */
  location: string;
  /** Free-text remark in the carrier's style; may carry personal data in scenario 16. */
  remark: string | null;
  ndr: NdrReason | null;
}

export interface SandboxPlace {
  city: string;
  state: string;
  pincode: string;
}

export interface SandboxShipment {
  carrier: string;
  awb: string;
  scenario: number;
  lane: number;
  origin: SandboxPlace;
  destination: SandboxPlace;
  /** Epoch ms of the booking, and the carrier's EDD (null when the carrier gives none). */
  bookedAt: number;
  edd: number | null;
  weightGrams: number;
  serviceType: 'surface' | 'express' | 'speed_post';
  /** Chronological (oldest first); renderers reorder as their carrier does. */
  steps: SandboxStep[];
  /** Scenario 15: renderers must emit same-day scans in this shuffled order. */
  shuffled: boolean;
}

/** What the sandbox answers for a scenario: a shipment, or one of the failure behaviours. */
export type ScenarioAnswer =
  | { kind: 'shipment'; shipment: SandboxShipment }
  | { kind: 'not_found' }
  | { kind: 'down' }           // 17: HTTP 503 on every call
  | { kind: 'slow'; shipment: SandboxShipment; delayMs: number } // 18: answers after 3 s
  | { kind: 'malformed' };     // 19: HTTP 200 with a truncated / invalid body

/** A carrier's side of the sandbox: its route and how it writes a shipment in its own format. */
export interface SandboxRenderer {
  slug: string;
  /** Routes this carrier answers, relative to the carrier's sandbox base path `/<slug>`. */
  routes: SandboxRoute[];
}

export interface SandboxRequest {
  method: string;
  /** Path after `/<slug>`, e.g. `/api/v1/packages/json/`. */
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  body: string;
}

export interface SandboxReply {
  status: number;
  contentType: string;
  body: string;
}

export interface SandboxRoute {
  method: 'GET' | 'POST';
  /** Path pattern with `:param` segments, relative to `/<slug>`. */
  path: string;
  /**
   * Handles one request. `lookup(awb)` gives the scenario answer for an AWB at the time of the
   * request; the route decides auth failures, the not-found body, the malformed body and so on.
   */
  handle(req: SandboxRequest, params: Record<string, string>, lookup: (awb: string) => ScenarioAnswer): SandboxReply;
}
