/**
 * Sandbox Delhivery: `GET /api/v1/packages/json/?waybill=<awb>` behind `Authorization: Token <key>`,
 * answering `ShipmentData[].Shipment` with `Scans[].ScanDetail` oldest first, in the Scan / ScanType /
 * Instructions vocabulary config/mappings/delhivery.yaml maps.
 */
import { ORIGIN_PINCODE_KEY } from '../../carriers/delhivery/adapter.ts';
import type { NdrReason } from '../../schemas/index.ts';
import { istIsoLocal } from '../ist.ts';
import type { SandboxRoute, SandboxShipment, SandboxStep, SandboxRenderer, StepKind } from '../types.ts';
import { drfTokenRejection, jsonReply as json, latestStep, oldestFirst, unavailableReply } from './shared.ts';

const SANDBOX_TOKEN = 'sandbox';

interface ScanWords {
  scan: string;
  scanType: string;
  statusCode: string;
  instructions: string;
  /**
   * The instruction is what tells this "In Transit" / "Dispatched" scan apart (picked up, bagged,
   * out for delivery...), so a remark is added after it rather than written instead of it.
   */
  keepInstruction: boolean;
}

const words = (scan: string, scanType: string, statusCode: string, instructions: string, keepInstruction = false): ScanWords =>
  ({ scan, scanType, statusCode, instructions, keepInstruction });

const STEP_WORDS: Record<Exclude<StepKind, 'attempt_failed'>, ScanWords> = {
  booked: words('Manifested', 'UD', 'X-UCI', 'Manifest uploaded'),
  picked_up: words('In Transit', 'UD', 'X-PPOM', 'Shipment picked up', true),
  hub_in: words('In Transit', 'UD', 'X-ILL1F', 'Bag Received at Facility', true),
  bagged: words('In Transit', 'UD', 'X-DBL1F', 'Added to Bag', true),
  hub_out: words('In Transit', 'UD', 'X-DLL2F', 'Bag Added To Trip', true),
  // Delhivery writes Scan "Dispatched" for out for delivery; only the instruction says so.
  out_for_delivery: words('Dispatched', 'UD', 'X-DDD3FD', 'Out for delivery', true),
  delivered: words('Delivered', 'DL', 'EOD-38', 'Delivered to consignee'),
  hold: words('In Transit', 'UD', 'ST-108', 'Shipment held due to weather conditions'),
  // During a return Delhivery keeps writing "In Transit": only ScanType RT marks the return leg.
  rto_initiated: words('In Transit', 'RT', 'RT-101', 'Return to Origin initiated', true),
  // Real answers read "Pending" while the return travels (StatusType RT).
  rto_in_transit: words('Pending', 'RT', 'RT-110', 'Bag Added To Trip', true),
  rto_delivered: words('Delivered', 'RT', 'RT-113', 'RTO delivered to shipper'),
  cancelled: words('Canceled', 'CN', 'CN-101', 'Seller cancelled the order'),
  lost: words('Lost', 'LT', 'LT-100', 'Shipment lost'),
  unmapped: words('Sent for sanitisation', 'UD', 'ST-140', 'Shipment sent for sanitisation'),
};

/** Failed attempts: Scan "Pending" (ScanType UD) with the NSL reason as the instruction, as real answers write them. */
const ATTEMPT_REASONS: Record<NdrReason, { statusCode: string; instructions: string }> = {
  customer_unavailable: { statusCode: 'EOD-11', instructions: 'Consignee Unavailable' },
  address_issue: { statusCode: 'EOD-74', instructions: 'Bad/Incomplete Address' },
  refused: { statusCode: 'EOD-6', instructions: 'Customer Refused to accept/Order Cancelled' },
  premises_closed: { statusCode: 'EOD-86', instructions: 'Office/Institute closed' },
  cod_not_ready: { statusCode: 'EOD-69', instructions: 'Payment not ready with customer' },
  other: { statusCode: 'EOD-3', instructions: 'Not attempted' },
};

function wordsFor(step: SandboxStep): ScanWords {
  if (step.kind !== 'attempt_failed') return STEP_WORDS[step.kind];
  const reason = ATTEMPT_REASONS[step.ndr ?? 'other'];
  return words('Pending', 'UD', reason.statusCode, reason.instructions);
}

function instructionsOf(step: SandboxStep, w: ScanWords): string {
  if (step.remark === null) return w.instructions;
  return w.keepInstruction ? `${w.instructions} - ${step.remark}` : step.remark;
}

/** IST wall time, no offset, 0-3 fraction digits as Delhivery writes them (trailing zeros vary, the instant does not). */
function delhiveryTime(ms: number, index: number): string {
  const millis = String(((ms % 1000) + 1000) % 1000).padStart(3, '0').replace(/0+$/, '');
  return istIsoLocal(ms) + (millis ? `.${millis}` : ['', '.0', '.00'][index % 3]);
}

/** `Delhi Bijwasan Hub` → `Delhi_Bijwasan_Hub`; the lane's own cities get Delhivery's ` (State)`. */
function facility(location: string, shipment: SandboxShipment): string {
  const name = location.trim().replace(/\s+/g, '_');
  const place = [shipment.origin, shipment.destination].find((p) => p.city === location);
  return place ? `${name} (${place.state})` : name;
}

function firstAt(shipment: SandboxShipment, kinds: StepKind[]): string | null {
  const times = shipment.steps.filter((s) => kinds.includes(s.kind)).map((s) => s.at);
  return times.length === 0 ? null : istIsoLocal(Math.min(...times));
}

function shipmentBody(shipment: SandboxShipment): string {
  // Delhivery lists oldest first.
  const scans = oldestFirst(shipment).map((step, i) => {
    const w = wordsFor(step);
    const time = delhiveryTime(step.at, i);
    return {
      ScanDetail: {
        ScanDateTime: time,
        ScanType: w.scanType,
        Scan: w.scan,
        StatusDateTime: time,
        ScannedLocation: facility(step.location, shipment),
        StatusCode: w.statusCode,
        Instructions: instructionsOf(step, w),
      },
    };
  });
  const latest = latestStep(shipment.steps);
  const latestWords = latest ? wordsFor(latest) : STEP_WORDS.booked;
  const returning = shipment.steps.some((s) => s.kind === 'rto_initiated');
  const returned = shipment.steps.some((s) => s.kind === 'rto_delivered');
  const edd = shipment.edd === null ? null : istIsoLocal(shipment.edd);
  return JSON.stringify({
    ShipmentData: [{
      Shipment: {
        AWB: shipment.awb,
        PickUpDate: istIsoLocal(shipment.bookedAt),
        PickedupDate: firstAt(shipment, ['picked_up']),
        Origin: `${shipment.origin.city} (${shipment.origin.state})`,
        [ORIGIN_PINCODE_KEY]: Number(shipment.origin.pincode),
        Destination: shipment.destination.city,
        OriginRecieveDate: firstAt(shipment, ['hub_in']),
        DestRecieveDate: null,
        ExpectedDeliveryDate: edd,
        PromisedDeliveryDate: edd,
        FirstAttemptDate: firstAt(shipment, ['attempt_failed', 'delivered']),
        DeliveryDate: firstAt(shipment, ['delivered']),
        RTOStartedDate: firstAt(shipment, ['rto_initiated']),
        ReturnedDate: firstAt(shipment, ['rto_delivered']),
        ReverseInTransit: returning && !returned,
        DispatchCount: shipment.steps.filter((s) => s.kind === 'out_for_delivery').length,
        OrderType: 'Pre-paid',
        ChargedWeight: shipment.weightGrams,
        ReferenceNo: `SBX-${shipment.awb.slice(-6)}`,
        Consignee: {
          Name: 'Sandbox Consignee',
          Address1: [],
          City: shipment.destination.city,
          State: shipment.destination.state,
          PinCode: Number(shipment.destination.pincode),
          Country: 'India',
          Telephone1: '',
        },
        Status: latest
          ? {
            Status: latestWords.scan,
            StatusType: latestWords.scanType,
            StatusCode: latestWords.statusCode,
            StatusLocation: facility(latest.location, shipment),
            StatusDateTime: istIsoLocal(latest.at),
            RecievedBy: '',
            Instructions: instructionsOf(latest, latestWords),
          }
          : null,
        Scans: scans,
      },
    }],
  });
}

const trackRoute: SandboxRoute = {
  method: 'GET',
  path: '/api/v1/packages/json/',
  handle(req, _params, lookup) {
    const rejection = drfTokenRejection(req, SANDBOX_TOKEN);
    if (rejection) return rejection;
    const waybill = req.query.waybill?.trim();
    if (!waybill) return json(400, { ShipmentData: [], Error: 'waybill is required' });

    const answer = lookup(waybill);
    switch (answer.kind) {
      case 'not_found': return json(200, { Success: false, Error: 'No such waybill or Order Id found' });
      case 'down': return unavailableReply();
      case 'malformed':
        return json(200, `{"ShipmentData":[{"Shipment":{"AWB":"${waybill.replace(/\W/g, '')}","Scans":[{"ScanDetail":{"ScanDateTime":"2026-`);
      case 'shipment':
      case 'slow':
        return json(200, shipmentBody(answer.shipment));
    }
  },
};

export const renderer: SandboxRenderer = { slug: 'delhivery', routes: [trackRoute] };
