/**
 * Delhivery: `GET /api/v1/packages/json/?waybill=<awb>` with `Authorization: Token <key>`, answering
 * JSON `ShipmentData[].Shipment` with `Scans[].ScanDetail` oldest first (carrier-formats.md).
 *
 * Credentials: `token` (the API key).
 *
 * Quirks handled: IST times without offset and with 0-3 fraction digits, `PinCode` as a number,
 * facility names like `Amritsar_VerkaBypss_I (Punjab)`, misspelled keys (`RecievedBy`), scans that
 * carry `geo_location` and `call_duration` (ignored: personal data the product never needs),
 * `Address1`/`Address2` as arrays (ignored), "no such waybill" answers as
 * `{"Success": false, "Error": "No such waybill or Order Id found"}` (real) or an empty
 * `ShipmentData`. During a return `Status.Status` may read "Pending" with StatusType RT, and
 * informational DL scans (POD uploaded, POD audit) can follow the delivery: the scans, not the
 * header's status, tell the state (config/mappings/delhivery.yaml). Real bodies: fixtures/SOURCES.md.
 */
import { z } from 'zod';
import { isEchoOf, type Awb, type Location, type PollShipment, type RawScan } from '../../schemas/index.ts';
import { requireCredential } from '../shared/credentials.ts';
import { readJsonAnswer } from '../shared/json-body.ts';
import { pincodeOf } from '../shared/places.ts';
import { neverThrows } from '../shared/safe-parse.ts';
import { unexpectedShape } from '../shared/schema-fields.ts';
import { isRealDateTime } from '../shared/wall-time.ts';
import type { CarrierAdapter, NativeResponse, ParsedPoll } from '../types.ts';

const SLUG = 'delhivery';

/**
 * Origin pincode: Delhivery's documented answer names only the consignee's `PinCode`, so this key is
 * *unconfirmed* (the sandbox writes it so lanes work). Real answers without it give no origin pincode.
 */
export const ORIGIN_PINCODE_KEY = 'OriginPinCode';

/** Text or number as the carrier sends it; blank → null. */
const loose = z.union([z.string(), z.number()]).nullish()
  .transform((v) => (v === null || v === undefined || String(v).trim() === '' ? null : String(v)));

const ScanDetailSchema = z.object({
  Scan: z.string(),
  ScanType: loose,
  ScanDateTime: loose,
  StatusDateTime: loose,
  ScannedLocation: loose,
  Instructions: loose,
});

const ShipmentSchema = z.object({
  AWB: loose,
  Origin: loose,
  Destination: loose,
  [ORIGIN_PINCODE_KEY]: loose,
  PickUpDate: loose,
  ExpectedDeliveryDate: loose,
  PromisedDeliveryDate: loose,
  ChargedWeight: loose,
  Consignee: z.object({ City: loose, State: loose, PinCode: loose }).nullish(),
  Scans: z.array(z.object({ ScanDetail: ScanDetailSchema })),
});

const BodySchema = z.object({
  ShipmentData: z.array(z.object({ Shipment: ShipmentSchema })).nullish(),
  Error: loose,
});

type DelhiveryShipment = z.infer<typeof ShipmentSchema>;

const TIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$/;

/** `2024-09-21T14:31:48.752` (IST, kept offset-less) → ISO; null when not a real time. */
function delhiveryTime(value: string | null): string | null {
  const m = value === null ? null : TIME.exec(value.trim());
  if (!m) return null;
  const [, y, mo, d, h, mi, s = '00', fraction = '', offset = ''] = m as unknown as string[];
  if (!isRealDateTime(Number(y), Number(mo), Number(d), Number(h), Number(mi), Number(s))) return null;
  const zone = offset === '' || offset === 'Z' ? offset : `${offset.slice(0, 3)}:${offset.slice(-2)}`;
  return `${y}-${mo}-${d}T${h}:${mi}:${s}${fraction}${zone}`;
}

/** `Amritsar_VerkaBypss_I (Punjab)` → office, city `Amritsar`, state `Punjab`; `Dehradun (Uttarakhand)` → city. */
function facilityPlace(facility: string | null, pin: string | null): Location | null {
  if (facility === null && pin === null) return null;
  const m = facility ? /^(.*?)\s*\(([^()]*)\)\s*$/.exec(facility) : null;
  const name = (m ? m[1]! : facility ?? '').trim();
  const state = m ? m[2]!.trim() || null : null;
  const city = name.split('_')[0]!.trim() || null;
  return { office: name.includes('_') ? name : null, city, state, pincode: pin };
}

function grams(value: string | null): number | null {
  const n = value === null ? NaN : Number(value);
  return Number.isFinite(n) && n > 0 ? Math.round(n) : null;
}

function headerOf(s: DelhiveryShipment): PollShipment {
  const consignee = s.Consignee;
  const destinationCity = consignee?.City ?? s.Destination;
  const destinationPin = pincodeOf(consignee?.PinCode ?? null);
  return {
    origin: facilityPlace(s.Origin, pincodeOf(s[ORIGIN_PINCODE_KEY])),
    destination: destinationCity === null && destinationPin === null
      ? null
      : { city: destinationCity, state: consignee?.State ?? null, pincode: destinationPin },
    // The tracking answer names no product (surface / express).
    service_type: null,
    weight_grams: grams(s.ChargedWeight),
    booked_at: delhiveryTime(s.PickUpDate),
    estimated_delivery_at: delhiveryTime(s.ExpectedDeliveryDate) ?? delhiveryTime(s.PromisedDeliveryDate),
  };
}

function scansOf(s: DelhiveryShipment): RawScan[] | string {
  const scans: RawScan[] = [];
  for (const [i, { ScanDetail: d }] of s.Scans.entries()) {
    const occurredAt = delhiveryTime(d.ScanDateTime) ?? delhiveryTime(d.StatusDateTime);
    if (occurredAt === null) return `scan ${i + 1} has no readable ScanDateTime`;
    if (d.Scan.trim() === '') return `scan ${i + 1} has no Scan text`;
    scans.push({ occurred_at: occurredAt, raw_status: d.Scan, raw_code: d.ScanType, remarks: d.Instructions, location: d.ScannedLocation });
  }
  return scans;
}

/** Delhivery's words for a number it does not know. */
const NO_SUCH_WAYBILL = /no such waybill|waybill not found|no data found/i;

function readBody(awb: Awb, response: NativeResponse): ParsedPoll {
  const read = readJsonAnswer(response);
  if (!('json' in read)) return read;
  const parsed = BodySchema.safeParse(read.json);
  if (!parsed.success) return unexpectedShape('JSON', parsed.error);
  const { ShipmentData: data, Error: carrierError } = parsed.data;
  if (!data) {
    if (carrierError !== null && NO_SUCH_WAYBILL.test(carrierError)) return { outcome: 'not_found' };
    return { outcome: 'error', error: carrierError ? `carrier error: ${carrierError.slice(0, 100)}` : 'no ShipmentData' };
  }
  if (data.length === 0) return { outcome: 'not_found' };
  const shipment = (data.find((d) => isEchoOf(d.Shipment.AWB, awb)) ?? data[0]!).Shipment;
  const scans = scansOf(shipment);
  if (typeof scans === 'string') return { outcome: 'error', error: scans };
  return { outcome: 'ok', shipment: headerOf(shipment), scans };
}

export const adapter: CarrierAdapter = {
  slug: SLUG,

  async fetch(awb, endpoint, send) {
    const url = `${endpoint.baseUrl}/api/v1/packages/json/?waybill=${encodeURIComponent(awb)}`;
    return send({ method: 'GET', url, headers: { Authorization: `Token ${requireCredential(SLUG, endpoint, 'token')}`, Accept: 'application/json' } });
  },

  parse: neverThrows(readBody),
};
