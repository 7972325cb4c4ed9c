import type { Awb, PollShipment, RawScan } from '../schemas/index.ts';

/** A carrier's HTTP answer as the adapter sees it (body always read as text). */
export interface NativeResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface HttpRequest {
  method: 'GET' | 'POST';
  /** Absolute URL. */
  url: string;
  headers?: Record<string, string>;
  body?: string;
  /** True when repeating the call is harmless (a read sent as POST): such calls may be retried. */
  idempotent?: boolean;
}

/** The HTTP transport an adapter talks through; timeouts, retries and breakers live behind it. */
export type HttpSend = (request: HttpRequest) => Promise<NativeResponse>;

export interface CarrierEndpoint {
  /** e.g. https://track.delhivery.com or the sandbox's http://127.0.0.1:4010/delhivery */
  baseUrl: string;
  /** Carrier credentials by name (token, login id, licence key...), from configuration. */
  credentials: Record<string, string>;
}

/** What a parser makes of one native body: personal data is removed by the caller before it leaves. */
export type ParsedPoll =
  | { outcome: 'ok'; shipment: PollShipment | null; scans: RawScan[] }
  | { outcome: 'not_found' }
  | { outcome: 'error'; error: string };

/**
 * One carrier's wire protocol: how to ask (path, method, auth style, body) and how to read the
 * answer (JSON, XML, HTML or plain text). Parsers never throw: a malformed body is an `error`.
 */
export interface CarrierAdapter {
  slug: string;
  /** Performs the native tracking call(s) for `awb` (including any login call the carrier needs). */
  fetch(awb: Awb, endpoint: CarrierEndpoint, send: HttpSend): Promise<NativeResponse>;
  /** `awb` is canonical (lib/schemas/awb.ts): a carrier's echo of it is compared with isEchoOf. */
  parse(awb: Awb, response: NativeResponse): ParsedPoll;
}
