/**
 * Pure: the simulated network held against published Indian figures (issue 40;
 * docs/engineers/network-model.md "Against published figures"). Each row is one figure measured on
 * a generated history, with the band the published figures allow and where they come from. The
 * bench (`npm run bench -- network`) and `node scripts/network/fidelity-table.ts` print the rows;
 * lib/network/fidelity.test.ts holds every one inside its band on a seeded history.
 */
import type { Zone } from '../places/places.ts';
import { DAY_MS } from '../time/index.ts';
import { istDayOf, istDayStartMs } from '../time/ist-day.ts';
import type { NetworkConfig } from './config.ts';
import { isFestive, type Journey } from './journey.ts';

export interface FidelityRow {
  figure: string;
  value: number;
  unit: string;
  /** The band the published figures allow, both ends included (null: open). */
  band: readonly [number | null, number | null];
  published: string;
  source: string;
}

/** A journey of a history, with its sandbox lane (null off the ten lanes). */
export type MeasuredJourney = Journey & { sandboxLane: number | null };

const SHIPWAY = 'Shipway ShipNotes FY25 (Financial Express B2B, mediainfoline)';
const ZONE_NORMS = 'zone norms: Eshopbox, Printrove, Shiprocket support 43000664184';
const DATASET = 'a 1.4 M-shipment e-commerce data set (one shipper, Jun-Aug 2022, median lane 517 km)';
const POSTAL = 'D.G. Posts order 13-45/2008-D (2022 update)';

/** IST calendar days from the pickup's day to the delivery's: "ship-to-delivery" as published. */
export function shipToDeliveryDays(j: Journey): number {
  return Math.round((istDayStartMs(istDayOf(j.deliveredAt!)) - istDayStartMs(istDayOf(j.pickedUpAt))) / DAY_MS);
}

function median(values: readonly number[]): number {
  return quantile(values, 0.5);
}

/** Nearest-rank quantile; NaN when empty. */
function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length))) - 1]!;
}

const share = (part: number, whole: number) => (whole === 0 ? Number.NaN : part / whole);
const round = (n: number, digits: number) => Math.round(n * 10 ** digits) / 10 ** digits;

function firstAttemptDay(j: Journey): number | null {
  const ofd = j.steps.find((s) => s.kind === 'out_for_delivery');
  return ofd ? Math.round((istDayStartMs(istDayOf(ofd.at)) - istDayStartMs(istDayOf(j.bookedAt))) / DAY_MS) : null;
}

/** The figures of `journeys` (one history), each with its published band. */
export function fidelityRows(journeys: readonly MeasuredJourney[], config: NetworkConfig): FidelityRow[] {
  const delivered = journeys.filter((j) => j.outcome === 'delivered');
  const days = delivered.map(shipToDeliveryDays);
  const zoneDays = (zone: Zone, surfaceOnly = false) =>
    delivered.filter((j) => j.zone === zone && (!surfaceOnly || j.serviceType === 'surface')).map(shipToDeliveryDays);
  const toSpecialState = delivered.filter((j) => j.zone === 'special' && j.destination.remote && j.origin.stateCode !== j.destination.stateCode);
  // Speed Post against India Post parcels on the lanes both carry (sandbox.md's ten).
  const onLanes = (carrier: string) => delivered.filter((j) => j.carrier === carrier && j.sandboxLane !== null).map(shipToDeliveryDays);
  const closed = journeys.filter((j) => j.outcome !== 'lost');
  const rtoShare = (list: readonly Journey[]) => share(list.filter((j) => j.outcome === 'rto').length, list.length);
  const cod = closed.filter((j) => j.cod);
  const attempted = closed.filter((j) => j.steps.some((s) => s.kind === 'out_for_delivery'));
  const firstAttemptDelivered = attempted.filter((j) => {
    const first = j.steps.findIndex((s) => s.kind === 'out_for_delivery');
    return j.steps.slice(first + 1).find((s) => s.kind === 'delivered' || s.kind === 'attempt_failed')?.kind === 'delivered';
  });
  const withNdr = attempted.filter((j) => j.steps.some((s) => s.kind === 'attempt_failed'));
  const codByFirstAttempt = (low: number, high: number) => rtoShare(cod.filter((j) => {
    const d = firstAttemptDay(j);
    return d !== null && d >= low && d <= high;
  }));
  const carriers = Object.keys(config.carriers);
  const overClaim = carriers.filter((carrier) => {
    const own = delivered.filter((j) => j.carrier === carrier);
    const claimed = config.profiles[config.carriers[carrier]!.profile]!.promise.claimed_on_time;
    return own.length > 0 && own.filter((j) => j.deliveredAt! <= j.edd).length / own.length >= claimed;
  });
  const meanOf = (list: readonly number[]) => list.reduce((a, b) => a + b, 0) / list.length;
  const festive = delivered.filter((j) => isFestive(j.pickedUpAt, config)).map(shipToDeliveryDays);
  const rest = delivered.filter((j) => !isFestive(j.pickedUpAt, config)).map(shipToDeliveryDays);
  const origins = new Set(journeys.map((j) => j.origin.pincode)).size;

  const row = (figure: string, value: number, unit: string, band: FidelityRow['band'], published: string, source: string): FidelityRow =>
    ({ figure, value, unit, band, published, source });
  return [
    row('ship-to-delivery, median (whole network)', median(days), 'days', [2, 3], 'median 2 days', DATASET),
    row('ship-to-delivery, p90 (whole network)', quantile(days, 0.9), 'days', [4, 6], 'p90 5 days', DATASET),
    row('ship-to-delivery, mean (whole network)', round(meanOf(days), 2), 'days', [2, 3.5], 'mean 2.6 days', DATASET),
    row('within city, median', median(zoneDays('within_city')), 'days', [null, 2], '1-3 days', ZONE_NORMS),
    row('within state, median', median(zoneDays('within_state')), 'days', [1, 4], '3-4 days', ZONE_NORMS),
    row('metro to metro, surface, median', median(zoneDays('metro_to_metro', true)), 'days', [3, 5], '4-5 days surface', ZONE_NORMS),
    row('rest of India, surface, median', median(zoneDays('rest_of_india', true)), 'days', [3, 7], '5-7 days surface', ZONE_NORMS),
    row('to the North-East, J&K, Ladakh, islands, median', median(toSpecialState.map(shipToDeliveryDays)), 'days', [6, 10], '7-10 days', ZONE_NORMS),
    row('Speed Post ÷ India Post parcels, median, same ten lanes', round(median(onLanes('speedpost')) / median(onLanes('indiapost')), 2), '×',
      [null, 0.9], 'Speed Post 1-5 days, parcels 3-7', POSTAL),
    row('returns (RTO) of COD shipments', round(rtoShare(cod), 3), 'share', [0.18, 0.3], '~26 % (cities 18-35 %)', SHIPWAY),
    row('returns (RTO) of prepaid shipments', round(rtoShare(closed.filter((j) => !j.cod)), 3), 'share', [null, 0.03], 'under 2 %', SHIPWAY),
    row('returns (RTO) of all shipments', round(rtoShare(closed), 3), 'share', [0.1, 0.18], '~15 %', SHIPWAY),
    row('COD RTO, first attempt after 3+ days ÷ within 2', round(codByFirstAttempt(3, 99) / codByFirstAttempt(0, 2), 2), '×',
      [1.05, null], '22 % at 1-2 days, 27 % at 3-5, 35 % beyond', SHIPWAY),
    row('delivered at the first attempt', round(share(firstAttemptDelivered.length, attempted.length), 3), 'share',
      [0.75, 0.85], '~80 %', 'issue 40 (industry first-attempt delivery)'),
    row('shipments with a failed attempt (NDR)', round(share(withNdr.length, attempted.length), 3), 'share', [0.08, 0.22], '8-20 %', 'issue 40'),
    row('carriers meeting their EDD as often as they claim', overClaim.length, `of ${carriers.length}`,
      [0, 0], 'claims run above what is delivered', 'issue 40'),
    row('festive season ÷ rest, mean ship-to-delivery', round(meanOf(festive) / meanOf(rest), 2), '×',
      [1, 1.3], '2.5 days (2024), 2.83 (2025) festive averages', 'ClickPost (BusinessWorld 2024, The Federal 2025)'),
    row(`origin pincodes (${journeys.length.toLocaleString('en-US')} journeys)`, origins, 'pincodes',
      [100, null], 'thousands of sellers beside a few fulfilment centres', 'issue 40'),
  ];
}

/** True when the row's value is inside its band. */
export function inBand(row: FidelityRow): boolean {
  const [low, high] = row.band;
  return Number.isFinite(row.value) && (low === null || row.value >= low) && (high === null || row.value <= high);
}

/** The band as text: "2-3", "≤ 2", "≥ 100". */
export function bandText(row: FidelityRow): string {
  const [low, high] = row.band;
  if (low === null) return `≤ ${high}`;
  if (high === null) return `≥ ${low}`;
  return low === high ? `${low}` : `${low}-${high}`;
}

/** The rows as the Markdown table of docs/engineers/network-model.md. */
export function fidelityTable(rows: readonly FidelityRow[]): string {
  const lines = ['| figure | model | band | published | source |', '| --- | --- | --- | --- | --- |'];
  for (const row of rows) {
    const mark = inBand(row) ? '' : ' ✗';
    lines.push(`| ${row.figure} | ${row.value} ${row.unit}${mark} | ${bandText(row)} | ${row.published} | ${row.source} |`);
  }
  return lines.join('\n');
}
