/**
 * What a request looks like in the logs. Logs name a key only by its prefix; the key header and the
 * admin token never reach a log line (headers are not logged). Query strings are where clients and
 * operators put secrets by mistake (`?token=`, `?api_key=`), and no route reads one, so every query
 * value is replaced, keeping the names (useful when reading a log); a key-shaped string elsewhere in
 * the path (a full key sent as an admin prefix) is cut to its prefix.
 */

/** A key-shaped string: its first 16 characters (the prefix) may be logged, the rest never. */
const KEY_IN_TEXT = /(trk_(?:live|test)_[A-Za-z0-9]{7})[A-Za-z0-9]+/g;

export const REDACTED = '[redacted]';

/** The URL as it may be logged. */
export function redactUrl(url: string): string {
  const mark = url.indexOf('?');
  const path = (mark === -1 ? url : url.slice(0, mark)).replace(KEY_IN_TEXT, '$1…');
  if (mark === -1) return path;
  const query = url.slice(mark + 1).split('&').map((pair) => {
    const eq = pair.indexOf('=');
    // A bare word may be a secret too (`?<token>`): only `name=` keeps its name.
    return eq === -1 ? (pair === '' ? '' : REDACTED) : `${pair.slice(0, eq).replace(KEY_IN_TEXT, '$1…')}=${REDACTED}`;
  });
  return `${path}?${query.join('&')}`;
}

/** Pino serializer of `req` in the API's log lines. */
export function requestSerializer(request: { method: string; url: string; id: string; keyPrefix?: string }) {
  return { method: request.method, url: redactUrl(request.url), id: request.id, key_prefix: request.keyPrefix };
}
