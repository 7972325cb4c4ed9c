/**
 * Each carrier's own scan vocabulary, learned once per process from the sandbox itself: a probe
 * shipment with one step of each kind is rendered by the carrier's sandbox route and read back by
 * the carrier's real adapter (no HTTP: the adapter's requests are answered in process). The
 * history generator then writes millions of scans by table lookup, in exactly the words the
 * sandbox and the mapping rules (config/mappings/*.yaml) agree on.
 */
import { ADAPTERS } from '../carriers/adapters.ts';
import { SANDBOX_CREDENTIAL } from '../carriers/endpoints.ts';
import type { HttpRequest, NativeResponse } from '../carriers/types.ts';
import { requireAwb, type NdrReason, type PollShipment, type RawScan } from '../schemas/index.ts';
import { HOUR_MS, IST_OFFSET } from '../time/index.ts';
import { istIsoLocal } from './ist.ts';
import { RENDERERS } from './renderers.ts';
import { FAILED_ATTEMPT_REMARKS, HOLD_REMARKS } from './scenario.ts';
import type { SandboxRenderer, SandboxShipment, SandboxStep, ScenarioAnswer, StepKind } from './types.ts';

const PROBE_PLACE = 'Probe Ville';
const PROBE_MATCH = /probe(.?)ville/i;
const PROBE_AT = Date.UTC(2026, 0, 14, 6, 30);
const FAIL_REASONS = ['customer_unavailable', 'address_issue', 'refused', 'premises_closed', 'cod_not_ready'] as const;
const KINDS: readonly StepKind[] = [
  'booked', 'picked_up', 'hub_in', 'hub_out', 'out_for_delivery', 'delivered', 'hold', 'rto_initiated', 'rto_in_transit', 'rto_delivered', 'lost',
];

/** A text with the probe's place in it, ready to take another place in the carrier's spelling. */
type Template = (location: string) => string;

function templateOf(text: string): Template {
  const m = PROBE_MATCH.exec(text);
  if (!m) return () => text;
  const before = text.slice(0, m.index);
  const after = text.slice(m.index + m[0].length);
  const separator = m[1] ?? ' ';
  const upper = m[0] === m[0].toUpperCase();
  const lower = m[0] === m[0].toLowerCase();
  return (location) => {
    const spelled = location.trim().split(/\s+/).join(separator);
    return before + (upper ? spelled.toUpperCase() : lower ? spelled.toLowerCase() : spelled) + after;
  };
}

interface ScanWords {
  rawStatus: Template;
  rawCode: string | null;
  remarks: Template | null;
  location: Template | null;
}

/** How the carrier writes times: without an offset (IST wall time), with Z, or with +05:30. */
type TimeStyle = 'local' | 'utc' | 'offset';

export interface CarrierVocabulary {
  carrier: string;
  words(kind: StepKind, ndr: NdrReason | null): ScanWords;
  timeStyle: TimeStyle;
  /** The header fields the carrier's answers carry (others are null, as the adapter reads them). */
  header: { [K in keyof PollShipment]: boolean };
  /** The location fields the carrier's header gives (office, city, state, pincode). */
  locationFields: { city: boolean; state: boolean; pincode: boolean };
}

function matchRoute(renderer: SandboxRenderer, method: string, path: string) {
  const wanted = path.replace(/\/+$/, '').split('/');
  for (const route of renderer.routes) {
    if (route.method !== method) continue;
    const pattern = route.path.replace(/\/+$/, '').split('/');
    if (pattern.length !== wanted.length) continue;
    const params: Record<string, string> = {};
    if (pattern.every((segment, i) => (segment.startsWith(':')
      ? ((params[segment.slice(1)] = decodeURIComponent(wanted[i]!)), true)
      : segment === wanted[i]))) {
      return { route, params };
    }
  }
  return null;
}

/** Answers an adapter's requests from the carrier's sandbox route, with `shipment` for every number. */
function inProcessSend(renderer: SandboxRenderer, shipment: SandboxShipment) {
  const base = `http://sandbox.invalid/${renderer.slug}`;
  return async (request: HttpRequest): Promise<NativeResponse> => {
    const url = new URL(request.url);
    const path = url.pathname.slice(`/${renderer.slug}`.length) || '/';
    const found = matchRoute(renderer, request.method, path);
    if (!found || !request.url.startsWith(base)) return { status: 404, headers: {}, body: '' };
    const lookup = (): ScenarioAnswer => ({ kind: 'shipment', shipment });
    const reply = found.route.handle({
      method: request.method, path, query: Object.fromEntries(url.searchParams), headers: request.headers ?? {}, body: request.body ?? '',
    }, found.params, lookup);
    return { status: reply.status, headers: { 'content-type': reply.contentType }, body: reply.body };
  };
}

function probeShipment(carrier: string, awb: string, step: SandboxStep): SandboxShipment {
  // The lane's own cities are written differently by some carriers (Delhivery adds the state): the
  // probe's scans happen elsewhere, as a hub's do.
  const place = { city: 'Origin Town', state: 'Maharashtra', pincode: '400001' };
  const steps: SandboxStep[] = step.kind === 'booked'
    ? [step]
    : [{ kind: 'booked', at: step.at - 2 * HOUR_MS, location: PROBE_PLACE, remark: null, ndr: null }, step];
  return {
    carrier, awb, scenario: 2, lane: 0, origin: place, destination: { ...place, pincode: '700001', state: 'West Bengal' },
    bookedAt: steps[0]!.at, edd: step.at + 48 * HOUR_MS, weightGrams: 500, serviceType: 'surface', steps, shuffled: false,
  };
}

function timeStyleOf(text: string): TimeStyle {
  if (/Z$/.test(text)) return 'utc';
  return /[+-]\d{2}:?\d{2}$/.test(text) ? 'offset' : 'local';
}

/** Writes `ms` as the carrier does. */
export function carrierTime(ms: number, style: TimeStyle): string {
  if (style === 'utc') return new Date(ms).toISOString();
  return style === 'offset' ? `${istIsoLocal(ms)}${IST_OFFSET}` : istIsoLocal(ms);
}

const learned = new Map<string, Promise<CarrierVocabulary>>();

/** The vocabulary of `carrier` (memoised per process). */
export function vocabularyOf(carrier: string): Promise<CarrierVocabulary> {
  let known = learned.get(carrier);
  if (!known) learned.set(carrier, (known = probe(carrier)));
  return known;
}

async function probe(carrier: string): Promise<CarrierVocabulary> {
  const renderer = RENDERERS.find((r) => r.slug === carrier);
  const adapter = ADAPTERS[carrier];
  if (!renderer || !adapter) throw new Error(`no sandbox renderer or adapter for carrier "${carrier}"`);
  const { example } = EXAMPLES[carrier]!;
  const endpoint = { baseUrl: `http://sandbox.invalid/${carrier}`, credentials: new Proxy({}, { get: () => SANDBOX_CREDENTIAL }) as Record<string, string> };
  const table = new Map<string, ScanWords>();
  let timeStyle: TimeStyle = 'local';
  let header: CarrierVocabulary['header'] | null = null;
  let locationFields: CarrierVocabulary['locationFields'] = { city: false, state: false, pincode: false };
  const cases: { kind: StepKind; ndr: NdrReason | null; remark: string | null }[] = [
    ...KINDS.map((kind) => ({
      kind,
      ndr: kind === 'hold' ? 'other' as const : null,
      remark: kind === 'hold' ? HOLD_REMARKS[0]! : kind === 'lost' ? 'Shipment declared lost in transit' : null,
    })),
    ...FAIL_REASONS.map((ndr) => ({ kind: 'attempt_failed' as const, ndr, remark: FAILED_ATTEMPT_REMARKS[ndr][0]! })),
  ];
  for (const c of cases) {
    const step: SandboxStep = { kind: c.kind, at: PROBE_AT, location: PROBE_PLACE, remark: c.remark, ndr: c.ndr };
    const shipment = probeShipment(carrier, example, step);
    const response = await adapter.fetch(requireAwb(example), endpoint, inProcessSend(renderer, shipment));
    const parsed = adapter.parse(requireAwb(example), response);
    if (parsed.outcome !== 'ok') throw new Error(`${carrier}: the probe of "${c.kind}" was not read (${parsed.outcome})`);
    const scan = latestScan(parsed.scans);
    if (!scan) throw new Error(`${carrier}: the probe of "${c.kind}" gave no scan`);
    timeStyle = timeStyleOf(scan.occurred_at);
    table.set(keyOf(c.kind, c.ndr), {
      rawStatus: templateOf(scan.raw_status),
      rawCode: scan.raw_code,
      remarks: scan.remarks === null ? null : templateOf(scan.remarks),
      location: scan.location === null ? null : templateOf(scan.location),
    });
    const origin = parsed.shipment?.origin;
    if (!header && origin) locationFields = { city: origin.city != null, state: origin.state != null, pincode: origin.pincode != null };
    header ??= {
      origin: parsed.shipment?.origin != null, destination: parsed.shipment?.destination != null,
      service_type: parsed.shipment?.service_type != null, weight_grams: parsed.shipment?.weight_grams != null,
      booked_at: parsed.shipment?.booked_at != null, estimated_delivery_at: parsed.shipment?.estimated_delivery_at != null,
    };
  }
  return {
    carrier,
    timeStyle,
    header: header!,
    locationFields,
    words(kind, ndr) {
      const words = table.get(keyOf(kind, kind === 'attempt_failed' ? (ndr ?? 'customer_unavailable') : kind === 'hold' ? 'other' : null));
      if (!words) throw new Error(`${carrier}: no words for step "${kind}"`);
      return words;
    },
  };
}

function keyOf(kind: StepKind, ndr: NdrReason | null): string {
  return ndr && kind === 'attempt_failed' ? `${kind}:${ndr}` : kind;
}

/** The scan of the probe's last step: the one dated latest (times without offset are IST). */
function latestScan(scans: readonly RawScan[]): RawScan | null {
  const ms = (s: RawScan) => Date.parse(timeStyleOf(s.occurred_at) === 'local' ? `${s.occurred_at}${IST_OFFSET}` : s.occurred_at);
  return scans.reduce<RawScan | null>((best, s) => (best === null || ms(s) > ms(best) ? s : best), null);
}

/** A number of each carrier's shape the probe asks about. */
const EXAMPLES: Readonly<Record<string, { example: string }>> = {
  delhivery: { example: '1234567890102' }, bluedart: { example: '12345670102' }, dtdc: { example: 'V01190102' },
  shiprocket: { example: '788829350102' }, shreemaruti: { example: '1234560102' }, indiapost: { example: 'RK123450102IN' },
  speedpost: { example: 'EE123450102IN' }, xpressbees: { example: '123456789010102' }, shadowfax: { example: 'SF123450102' },
  ekart: { example: 'FMPC0279650102' }, professionalcouriers: { example: 'PON8330102' },
};
