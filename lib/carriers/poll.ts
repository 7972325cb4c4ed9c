/**
 * The one way the product asks a carrier: `poll(carrier, awb)` → a valid `carrier_poll.v1`. The API,
 * the poller and the tests all go through it. It never throws for carrier problems (down, timeout,
 * open breaker, malformed body): those are polls with outcome `error`. Personal data leaves here
 * already removed (decisions.md "Personal data").
 */
import { randomUUID } from 'node:crypto';
import { Agent } from 'undici';
import { redactNullable, redactText } from '../redact/index.ts';
import {
  CarrierPollSchema,
  requireAwb,
  type Awb,
  type CarrierPoll,
  type Location,
  type PollShipment,
  type PollSource,
  type RawScan,
} from '../schemas/index.ts';
import { ADAPTERS } from './adapters.ts';
import { liveEndpoint, sandboxEndpoint } from './endpoints.ts';
import { CarrierUnavailableError, createHttpSend, type ClosableHttpSend, type HttpSendOptions } from './http.ts';
import type { CarrierAdapter, CarrierEndpoint, ParsedPoll } from './types.ts';
import type { KeyMode } from '../schemas/index.ts';

export interface PollOptions {
  /** Who asked; default `lookup`. */
  source?: PollSource;
  /** `test` (trk_test_ keys) always asks the sandbox; default `live`. */
  mode?: KeyMode;
}

export interface CarrierPollerDeps {
  /** Base URL of the sandbox carrier network, e.g. http://127.0.0.1:4010. Needed for mode `test`. */
  sandboxUrl?: string | null;
  /** Where mode `live` goes: the real carriers (default) or the sandbox (the embedded default). */
  liveTarget?: 'carriers' | 'sandbox';
  /** Carrier URLs and credentials (CARRIER_<SLUG>_URL, CARRIER_<SLUG>_<NAME>); default process.env. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Epoch ms of `polled_at`; default Date.now. */
  clock?: () => number;
  /** Transport settings applied to every carrier (timeouts, retries, limits, breaker). */
  http?: Omit<HttpSendOptions, 'name' | 'dispatcher'>;
  /** Carrier wire protocols by slug; default all 11. */
  adapters?: Readonly<Record<string, CarrierAdapter>>;
  /** Poll ids; default random UUIDs. */
  newId?: () => string;
}

export interface CarrierPoller {
  /**
   * A poll's entry: `awb` is parsed here (lib/schemas/awb.ts), so a caller holding text (the bench,
   * a fixture) may pass it as it is; a number the parser refuses throws, as an unknown carrier does.
   */
  poll(carrier: string, awb: Awb | string, options?: PollOptions): Promise<CarrierPoll>;
  /** Closes the carriers' connections. */
  close(): Promise<void>;
}

function redactLocation(location: Location | null): Location | null {
  if (location === null) return null;
  return {
    ...(location.office !== undefined ? { office: redactNullable(location.office) } : {}),
    city: redactNullable(location.city),
    state: redactNullable(location.state),
    pincode: location.pincode,
  };
}

function redactShipment(shipment: PollShipment | null): PollShipment | null {
  if (shipment === null) return null;
  return { ...shipment, origin: redactLocation(shipment.origin), destination: redactLocation(shipment.destination) };
}

function redactScan(scan: RawScan): RawScan {
  return {
    ...scan,
    raw_status: redactText(scan.raw_status),
    remarks: redactNullable(scan.remarks),
    location: redactNullable(scan.location),
  };
}

/** Why a call produced no carrier answer, in words for the poll's `error`. */
function failureReason(error: unknown): string {
  if (error instanceof CarrierUnavailableError) return `carrier unavailable (${error.reason}): ${error.message}`;
  return `carrier call failed: ${error instanceof Error ? error.message : String(error)}`;
}

/** A parser is trusted not to throw; if one does anyway, the poll still comes back as an error. */
function safeParse(adapter: CarrierAdapter, awb: Awb, response: Parameters<CarrierAdapter['parse']>[1]): ParsedPoll {
  try {
    return adapter.parse(awb, response);
  } catch (error) {
    return { outcome: 'error', error: `parser failed: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/**
 * A poll's error names the carrier: parsers say which field failed ("scan 3 has no readable
 * ScanDateTime"), this says whose answer it was, so a reader of the stored poll needs nothing else.
 */
export function carrierError(carrier: string, error: string): string {
  return error.toLowerCase().startsWith(carrier.toLowerCase()) ? error : `${carrier}: ${error}`;
}

export function createCarrierPoller(deps: CarrierPollerDeps = {}): CarrierPoller {
  const adapters = deps.adapters ?? ADAPTERS;
  const env = deps.env ?? process.env;
  const clock = deps.clock ?? Date.now;
  const newId = deps.newId ?? randomUUID;
  // One keep-alive pool for every carrier; each carrier gets its own limit, retries and breaker.
  // The pool itself sets no connection cap: carriers can share a host (the sandbox does), and a
  // request queued inside the pool would spend its timeout waiting; the per-carrier limit suffices.
  const dispatcher = new Agent({ keepAliveTimeout: 10_000 });
  const transports = new Map<string, ClosableHttpSend>();

  function endpointFor(slug: string, mode: KeyMode): CarrierEndpoint | string {
    const toSandbox = mode === 'test' || deps.liveTarget === 'sandbox';
    if (!toSandbox) return liveEndpoint(slug, env);
    if (!deps.sandboxUrl) return 'sandbox carrier network not configured';
    return sandboxEndpoint(slug, deps.sandboxUrl);
  }

  /** Breakers are per carrier and per target, so a sandbox outage never blocks the real carrier. */
  function transportFor(slug: string, endpoint: CarrierEndpoint): ClosableHttpSend {
    const key = `${slug} ${endpoint.baseUrl}`;
    let send = transports.get(key);
    if (!send) {
      send = createHttpSend({ ...deps.http, name: slug, dispatcher });
      transports.set(key, send);
    }
    return send;
  }

  async function ask(adapter: CarrierAdapter, slug: string, awb: Awb, mode: KeyMode): Promise<ParsedPoll> {
    const endpoint = endpointFor(slug, mode);
    if (typeof endpoint === 'string') return { outcome: 'error', error: endpoint };
    try {
      const response = await adapter.fetch(awb, endpoint, transportFor(slug, endpoint));
      return safeParse(adapter, awb, response);
    } catch (error) {
      return { outcome: 'error', error: failureReason(error) };
    }
  }

  async function poll(carrier: string, awb: Awb | string, options: PollOptions = {}): Promise<CarrierPoll> {
    const adapter = Object.hasOwn(adapters, carrier) ? adapters[carrier] : undefined;
    if (!adapter) throw new Error(`unsupported carrier "${carrier}"`);
    const number = requireAwb(awb);

    const parsed = await ask(adapter, carrier, number, options.mode ?? 'live');
    const base = {
      schema: 'carrier_poll.v1' as const,
      poll_id: newId(),
      carrier,
      awb: number,
      polled_at: new Date(clock()).toISOString(),
      source: options.source ?? 'lookup',
    };
    const poll: CarrierPoll = parsed.outcome === 'ok'
      ? { ...base, outcome: 'ok', shipment: redactShipment(parsed.shipment), scans: parsed.scans.map(redactScan), error: null }
      : parsed.outcome === 'not_found'
        ? { ...base, outcome: 'not_found', shipment: null, scans: [], error: null }
        : { ...base, outcome: 'error', shipment: null, scans: [], error: carrierError(carrier, redactText(parsed.error) || 'carrier error') };

    // A parser that produced something outside the contract must not publish it.
    const checked = CarrierPollSchema.safeParse(poll);
    if (checked.success) return checked.data;
    const issue = checked.error.issues[0];
    return {
      ...base,
      outcome: 'error',
      shipment: null,
      scans: [],
      error: `${carrier}: answer could not be read: ${issue ? `${issue.path.join('.')} ${issue.message}` : 'invalid poll'}`,
    };
  }

  return {
    poll,
    async close() {
      await Promise.all([...transports.values()].map((send) => send.close()));
      transports.clear();
      await dispatcher.close();
    },
  };
}
