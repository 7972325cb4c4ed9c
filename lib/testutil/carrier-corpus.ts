/**
 * Every carrier body the project keeps (lib/carriers/<slug>/fixtures: the copies of
 * ../shared/spec/real-bodies and the bodies written in their shape), parsed by its carrier's own
 * parser and mapped by the shipped rules: how many events each carrier's bodies give, and how many
 * of them no rule knows (`unknown`). A test holds the share at zero; `npm run bench -- mapping`
 * prints it. Parse and map only: no HTTP, no redaction (neither changes which rule matches).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { ADAPTERS } from '../carriers/adapters.ts';
import { normalizePoll, type RuleSet } from '../normalize/index.ts';
import { requireAwb, type CarrierPoll } from '../schemas/index.ts';

export const CARRIERS_DIR = new URL('../carriers/', import.meta.url);
/** The shared specification's real bodies, beside the repository (absent outside the project's machines). */
export const REAL_BODIES_DIR = new URL('../../../shared/spec/real-bodies/', import.meta.url);

export interface CorpusBody {
  carrier: string;
  file: string;
  /** The number the body answers for (parsers check it). */
  awb: string;
  status?: number;
  contentType?: string;
}

const XML = 'application/xml';
const TEXT = 'text/plain';

/** Every fixture body, with the number it answers for; corpus.test.ts checks none is missing. */
export const CORPUS: readonly CorpusBody[] = [
  { carrier: 'bluedart', file: 'apigateway-tracking-error-license-mismatch.json', awb: '44330038841' },
  { carrier: 'bluedart', file: 'legacy-routingservlet-xml-delivered-44330038841-2012.xml', awb: '44330038841', contentType: XML },
  { carrier: 'bluedart', file: 'own-gateway-ndr-then-return-new-waybill.json', awb: '90412345671' },
  { carrier: 'bluedart', file: 'own-servlet-cancelled.xml', awb: '90412345682', contentType: XML },
  { carrier: 'delhivery', file: 'in-transit-bag-received-amritsar-2024.json', awb: '26805710004126' },
  { carrier: 'delhivery', file: 'own-cancelled.json', awb: '1490812345614' },
  { carrier: 'delhivery', file: 'own-delivered-then-pod-scans.json', awb: '1490812345613' },
  { carrier: 'delhivery', file: 'own-ndr-then-rto-pending.json', awb: '1490812345612' },
  { carrier: 'delhivery', file: 'own-not-found.json', awb: '1490812345699' },
  { carrier: 'delhivery', file: 'staging-manifested-dehradun-2024.json', awb: '84108410000151' },
  { carrier: 'dtdc', file: 'karrio-doc-sample-json-delivered-B32242001.json', awb: 'B32242001' },
  { carrier: 'dtdc', file: 'karrio-error-401-token-missing-or-invalid.json', awb: 'B32242001', status: 401 },
  { carrier: 'dtdc', file: 'own-7D9128969-ndr-then-rto-delivered.json', awb: '7D9128969' },
  { carrier: 'dtdc', file: 'own-V01197967-held-lost.json', awb: 'V01197967' },
  { carrier: 'ekart', file: 'own-web-cancelled.json', awb: 'FMPC0279658299' },
  { carrier: 'ekart', file: 'own-web-delivered-after-ndr.json', awb: 'FMPP4307095480' },
  { carrier: 'ekart', file: 'own-web-ndr-then-rto.json', awb: 'FMPC0279658213' },
  { carrier: 'ekart', file: 'web-trackings-v2-csrf-error.json', awb: 'FMPP4307095480' },
  { carrier: 'ekart', file: 'web-trackings-v2-excerpt-TRUNCATED.txt', awb: 'FMPP4307095480' },
  { carrier: 'ekart', file: 'web-trackings-v2-not-found.json', awb: 'FMPP4307095480' },
  { carrier: 'indiapost', file: 'own-cancelled.json', awb: 'RK987654321IN' },
  { carrier: 'professionalcouriers', file: 'own-layout1-delivered-after-ndr.txt', awb: 'ITMI1505876', contentType: TEXT },
  { carrier: 'professionalcouriers', file: 'own-layout2-cancelled.txt', awb: 'CJB3300121', contentType: TEXT },
  { carrier: 'professionalcouriers', file: 'own-layout2-ndr-then-rto.txt', awb: 'MDU2204117', contentType: TEXT },
  { carrier: 'shadowfax', file: 'forward-delivered-staging-2024.json', awb: 'SF100000022431JIF' },
  { carrier: 'shadowfax', file: 'own-cancelled.json', awb: 'SF100000022978JIF' },
  { carrier: 'shadowfax', file: 'own-ndr-then-rts-delivered.json', awb: 'SF100000022977JIF' },
  { carrier: 'shadowfax', file: 'own-not-found.json', awb: 'SF100000022979JIF' },
  { carrier: 'shiprocket', file: 'own-cancelled.json', awb: '1490812345614' },
  { carrier: 'shiprocket', file: 'own-ndr-rto-delhivery.json', awb: '1490812345612' },
  { carrier: 'shiprocket', file: 'postman-doc-track-awb-404-missing-fields.json', awb: '1091188857722' },
  { carrier: 'shiprocket', file: 'postman-doc-track-awb-delivered-xpressbees.json', awb: '141123221084922' },
  { carrier: 'shiprocket', file: 'postman-doc-track-awb-no-activities.json', awb: '1091188857722' },
  { carrier: 'shiprocket', file: 'postman-doc-track-awbs-500-wrong-format.json', awb: '1091188857722' },
  { carrier: 'shiprocket', file: 'postman-doc-track-awbs-invalid-empty.json', awb: '1091188857722' },
  { carrier: 'shiprocket', file: 'postman-doc-track-awbs-multi.json', awb: '788830567028' },
  { carrier: 'shiprocket', file: 'postman-doc-track-awbs-multi.json', awb: '788829354408' },
  { carrier: 'shiprocket', file: 'postman-doc-track-order-id.json', awb: '1091188857722' },
  { carrier: 'shiprocket', file: 'postman-doc-track-shipment-picked-up-delhivery.json', awb: '1091188857722' },
  { carrier: 'shreemaruti', file: 'own-401-invalid-token.json', awb: '5012345678', status: 401 },
  { carrier: 'shreemaruti', file: 'own-cancelled.json', awb: '5012345701' },
  { carrier: 'shreemaruti', file: 'own-delivered-after-ndr.json', awb: '5012345678' },
  { carrier: 'shreemaruti', file: 'own-ndr-then-rto-delivered.json', awb: '5012345690' },
  { carrier: 'shreemaruti', file: 'own-not-found.json', awb: '5012345678', status: 404 },
  { carrier: 'speedpost', file: 'own-JH-ndr-then-rto.json', awb: 'JH123456789IN' },
  { carrier: 'xpressbees', file: 'own-aggregator-codes-refused-rto-delivered.json', awb: '141123221085017' },
  { carrier: 'xpressbees', file: 'own-cancelled.json', awb: '141123221084940' },
  { carrier: 'xpressbees', file: 'own-relayed-texts-ndr-rto.json', awb: '141123221084931' },
];

/** Fixture file names on disk, as `<slug>/<file>` (SOURCES.md is their description, not a body). */
export function fixtureFilesOnDisk(): string[] {
  const files: string[] = [];
  for (const slug of readdirSync(CARRIERS_DIR, { withFileTypes: true })) {
    if (!slug.isDirectory()) continue;
    let names: string[];
    try {
      names = readdirSync(new URL(`${slug.name}/fixtures/`, CARRIERS_DIR));
    } catch {
      continue;
    }
    for (const name of names) if (name !== 'SOURCES.md') files.push(`${slug.name}/${name}`);
  }
  return files.sort();
}

export function corpusText(body: Pick<CorpusBody, 'carrier' | 'file'>): string {
  return readFileSync(new URL(`${body.carrier}/fixtures/${body.file}`, CARRIERS_DIR), 'utf8');
}

/** An event no rule knew, with where it came from. */
export interface UnknownEvent {
  file: string;
  text: string;
  code: string | null;
}

export interface CarrierMappingShare {
  carrier: string;
  bodies: number;
  /** Bodies that gave a shipment (the rest are errors and "not found" answers). */
  found: number;
  events: number;
  unknown: UnknownEvent[];
}

/** Parses and maps every corpus body; one line per carrier, in the corpus's order. */
export function mappingShares(rules: RuleSet, corpus: readonly CorpusBody[] = CORPUS): CarrierMappingShare[] {
  const byCarrier = new Map<string, CarrierMappingShare>();
  for (const body of corpus) {
    const adapter = ADAPTERS[body.carrier];
    if (!adapter) throw new Error(`corpus body ${body.carrier}/${body.file}: no such carrier`);
    const share = byCarrier.get(body.carrier) ?? { carrier: body.carrier, bodies: 0, found: 0, events: 0, unknown: [] };
    byCarrier.set(body.carrier, share);
    share.bodies++;
    const parsed = adapter.parse(requireAwb(body.awb), {
      status: body.status ?? 200,
      headers: { 'content-type': body.contentType ?? 'application/json' },
      body: corpusText(body),
    });
    if (parsed.outcome !== 'ok') continue;
    const poll: CarrierPoll = {
      schema: 'carrier_poll.v1', poll_id: '00000000-0000-4000-8000-000000000000', carrier: body.carrier, awb: body.awb,
      polled_at: '2026-11-23T06:30:00.000Z', source: 'replay', outcome: 'ok', shipment: parsed.shipment, scans: parsed.scans, error: null,
    };
    const result = normalizePoll(poll, rules);
    if (result.kind !== 'found') continue;
    share.found++;
    const { events } = result.shipment.record;
    share.events += events.length;
    // Events are newest first and scans in the carrier's order: find each unknown event's scan by its text.
    for (const event of events) {
      if (event.code !== 'unknown') continue;
      const scan = parsed.scans.find((s) => s.raw_status.replace(/\s+/g, ' ').trim() === event.status_text);
      share.unknown.push({ file: body.file, text: event.status_text, code: scan?.raw_code ?? null });
    }
  }
  return [...byCarrier.values()];
}

/** Unknown events per hundred events, one decimal (0 for a carrier without events). */
export function unknownPercent(share: CarrierMappingShare): number {
  return share.events === 0 ? 0 : Math.round((share.unknown.length / share.events) * 1000) / 10;
}
