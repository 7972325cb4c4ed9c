import { z } from 'zod';

/** Offset-less carrier times are IST; an explicit offset or Z is kept as given. */
const ISO_WITH_OPTIONAL_OFFSET =
  /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$/;


export const LocationSchema = z.object({
  office: z.string().nullable().optional(),
  city: z.string().nullable(),
  state: z.string().nullable(),
  pincode: z.string().nullable(),
});
export type Location = z.infer<typeof LocationSchema>;

export const PollShipmentSchema = z.object({
  origin: LocationSchema.nullable(),
  destination: LocationSchema.nullable(),
  service_type: z.string().nullable(),
  weight_grams: z.number().int().nonnegative().nullable(),
  booked_at: z.string().regex(ISO_WITH_OPTIONAL_OFFSET).nullable(),
  estimated_delivery_at: z.string().regex(ISO_WITH_OPTIONAL_OFFSET).nullable(),
});
export type PollShipment = z.infer<typeof PollShipmentSchema>;

export const RawScanSchema = z.object({
  occurred_at: z.string().regex(ISO_WITH_OPTIONAL_OFFSET, 'an ISO 8601 date-time (offset optional: IST assumed)'),
  raw_status: z.string(),
  raw_code: z.string().nullable(),
  remarks: z.string().nullable(),
  location: z.string().nullable(),
});
export type RawScan = z.infer<typeof RawScanSchema>;

export const POLL_SOURCES = ['lookup', 'poller', 'replay'] as const;
export const POLL_OUTCOMES = ['ok', 'not_found', 'error'] as const;

/** `carrier_poll.v1`: one carrier poll, as published on `tracking.carrier-polls.v1` (contracts.md). */
export const CarrierPollSchema = z.object({
  schema: z.literal('carrier_poll.v1'),
  poll_id: z.string().uuid(),
  carrier: z.string().min(1),
  awb: z.string().min(1).max(40),
  polled_at: z.string().datetime({ offset: true }),
  source: z.enum(POLL_SOURCES),
  outcome: z.enum(POLL_OUTCOMES),
  shipment: PollShipmentSchema.nullable(),
  scans: z.array(RawScanSchema),
  error: z.string().nullable(),
});
export type CarrierPoll = z.infer<typeof CarrierPollSchema>;
export type PollSource = CarrierPoll['source'];
export type PollOutcome = CarrierPoll['outcome'];
