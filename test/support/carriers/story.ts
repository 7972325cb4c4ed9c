/** Sandbox stories for the adapter round-trip tests: steps, lanes and the shipment around them. */
import type { SandboxPlace, SandboxShipment, SandboxStep, StepKind } from '../../../lib/sandbox/types.ts';
import { NDR_REASONS, type NdrReason } from '../../../lib/schemas/index.ts';

export { HOUR_MS as HOUR } from '../../../lib/time/index.ts';

export const MUMBAI_TO_KOLKATA: { origin: SandboxPlace; destination: SandboxPlace } = {
  origin: { city: 'Mumbai', state: 'Maharashtra', pincode: '400001' },
  destination: { city: 'Kolkata', state: 'West Bengal', pincode: '700001' },
};

export const AHMEDABAD_TO_PUNE: { origin: SandboxPlace; destination: SandboxPlace } = {
  origin: { city: 'Ahmedabad', state: 'Gujarat', pincode: '380001' },
  destination: { city: 'Pune', state: 'Maharashtra', pincode: '411001' },
};

/** One step of a story: no remark and no NDR reason unless `extra` gives them. */
export function storyStep(kind: StepKind, at: number, location: string, extra: Partial<SandboxStep> = {}): SandboxStep {
  return { kind, at, location, remark: null, ndr: null, ...extra };
}

/** What a test fixes about its shipments; without `bookedAt` a shipment is booked at its first step. */
export type ShipmentDefaults = Omit<SandboxShipment, 'steps' | 'shuffled' | 'bookedAt'> & { bookedAt?: number };

/** Builds shipments around the given steps (in order, not shuffled unless `extra` says so). */
export function shipmentBuilder(defaults: ShipmentDefaults): (steps: SandboxStep[], extra?: Partial<SandboxShipment>) => SandboxShipment {
  return (steps, extra = {}) => ({ ...defaults, bookedAt: defaults.bookedAt ?? steps[0]!.at, steps, shuffled: false, ...extra });
}

/** Remarks with personal data (phone numbers, an OTP, an e-mail address) for the shared redaction step to find. */
export const AGENT_REMARK = 'Agent Ravi Kumar 9876543210 will deliver, share OTP 482913';
export const RECEIVER_REMARK = 'Delivered to Priya Sharma (+91 98765 43210) priya.sharma@example.com';

/** Places a step `hour` hours into a test's story. */
export type StepAtHour = (kind: StepKind, hour: number, extra?: Partial<SandboxStep>) => SandboxStep;

/**
 * Every step kind once, two hours apart from hour 0: booked in Mumbai, delivered in Kolkata, then
 * returned via Raipur (steps without a place keep `step`'s own). With `personalRemarks` the
 * out-for-delivery and delivery scans carry AGENT_REMARK and RECEIVER_REMARK.
 */
export function everyKindStory(step: StepAtHour, { personalRemarks = true } = {}): SandboxStep[] {
  const remark = (text: string) => (personalRemarks ? { remark: text } : {});
  return [
    step('booked', 0, { location: 'Mumbai' }),
    step('picked_up', 2, { location: 'Mumbai' }),
    step('hub_in', 4, { location: 'Mumbai Bhiwandi Hub' }),
    step('bagged', 6, { location: 'Mumbai Bhiwandi Hub' }),
    step('hub_out', 8, { location: 'Mumbai Bhiwandi Hub' }),
    step('hold', 10, { remark: 'Held at hub due to heavy rain', ndr: 'other' }),
    step('unmapped', 12),
    step('out_for_delivery', 14, { location: 'Kolkata', ...remark(AGENT_REMARK) }),
    step('attempt_failed', 16, { location: 'Kolkata', remark: 'Shipment attempted - Customer refused to accept', ndr: 'refused' }),
    step('lost', 18, { remark: 'Shipment declared lost in transit' }),
    step('cancelled', 20),
    step('delivered', 22, { location: 'Kolkata', ...remark(RECEIVER_REMARK) }),
    step('rto_initiated', 24, { location: 'Kolkata' }),
    step('rto_in_transit', 26, { location: 'Raipur Urla Hub' }),
    step('rto_delivered', 28, { location: 'Mumbai' }),
  ];
}

/**
 * Failed attempts to write: each NDR reason without a remark, then a refusal whose remark mentions
 * "Order Cancelled" (it must stay an attempt, not read as a cancellation).
 */
export const FAILED_ATTEMPT_CASES: readonly [NdrReason, string | null][] = [
  ...NDR_REASONS.map((ndr): [NdrReason, string | null] => [ndr, null]),
  ['refused', 'Customer Refused to accept/Order Cancelled'],
];
