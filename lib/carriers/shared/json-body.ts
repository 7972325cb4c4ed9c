/** Reading a carrier answer's body as JSON. */
import type { NativeResponse, ParsedPoll } from '../types.ts';

type ErrorPoll = Extract<ParsedPoll, { outcome: 'error' }>;

/** The body's JSON, or the error outcome saying why there is none. */
export function readJsonBody(body: string): { json: unknown } | ErrorPoll {
  const text = body.trim();
  if (text === '') return { outcome: 'error', error: 'empty body' };
  // Gateways answer error pages in HTML: say so rather than "invalid JSON".
  if (text.startsWith('<')) return { outcome: 'error', error: 'HTML instead of JSON' };
  const json = parseJsonOrUndefined(text);
  return json === undefined ? { outcome: 'error', error: 'invalid JSON' } : { json };
}

/** The carrier's own words in an error body (`message`, `detail`, `error`...), short; '' when none. */
function carrierMessage(body: string): string {
  const json = parseJsonOrUndefined(body.trim());
  if (typeof json !== 'object' || json === null) return '';
  const record = json as Record<string, unknown>;
  for (const key of ['message', 'detail', 'error', 'Error', 'msg']) {
    const value = record[key];
    if (typeof value === 'string' && value.trim() !== '') return value.trim().slice(0, 100);
  }
  return '';
}

/**
 * The error of a 401/403: the carrier refused our credentials (missing, wrong, expired or for
 * another product). Said in words, so whoever reads the poll knows to check CARRIER_<SLUG>_* settings.
 */
export function credentialsRejected(response: NativeResponse): ErrorPoll {
  const message = carrierMessage(response.body);
  return { outcome: 'error', error: `credentials rejected (HTTP ${response.status}${message ? `: ${message}` : ''})` };
}

/**
 * The JSON of a carrier API's answer, or the outcome its status already decides: a 404 that is no
 * HTML page is the API's own "no such number"; a 401/403 is a credentials error; any other non-2xx
 * is an error.
 */
export function readJsonAnswer(response: NativeResponse): { json: unknown } | ParsedPoll {
  if (response.status === 404 && !response.body.trim().startsWith('<')) return { outcome: 'not_found' };
  if (response.status === 401 || response.status === 403) return credentialsRejected(response);
  if (response.status < 200 || response.status > 299) return { outcome: 'error', error: `HTTP ${response.status}` };
  return readJsonBody(response.body);
}

/** `JSON.parse` that answers undefined for text that is not JSON. */
export function parseJsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
