/**
 * Where webhooks may go (contracts.md "Push", URL rules). `trk_live_` keys: https only, and the host
 * must resolve to public addresses only (no loopback, private, link-local — which holds the cloud
 * metadata address 169.254.169.254 —, carrier-grade NAT, unique-local, multicast or reserved
 * ranges), checked at creation and again at every attempt. `trk_test_` keys may also use http and
 * loopback, for a receiver on the developer's own machine; private networks stay refused for them
 * too, since a test key must not reach into the service's own network either.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

export type EndpointMode = 'live' | 'test';

const MAX_URL_LENGTH = 2048;

/** The address's range after unwrapping IPv4-mapped IPv6 (`::ffff:10.0.0.1` is 10.0.0.1). */
function rangeOf(ip: string): string | null {
  try {
    return ipaddr.process(ip).range();
  } catch {
    return null;
  }
}

export function isPublicAddress(ip: string): boolean {
  return rangeOf(ip) === 'unicast';
}

export function isAllowedAddress(ip: string, mode: EndpointMode): boolean {
  const range = rangeOf(ip);
  return range === 'unicast' || (mode === 'test' && range === 'loopback');
}

const unbracket = (host: string) => (host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host);
const isLocalhostName = (host: string) => host === 'localhost' || host.endsWith('.localhost');

/** Checks a URL's form, scheme and (for literal addresses and localhost) its address. */
export function checkEndpointUrl(raw: string, mode: EndpointMode): { ok: true; url: string } | { ok: false; reason: string } {
  if (raw.length > MAX_URL_LENGTH) return { ok: false, reason: `The URL is longer than ${MAX_URL_LENGTH} characters.` };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'The URL is not an absolute URL (e.g. https://example.com/hooks/tracking).' };
  }
  if (url.username || url.password) return { ok: false, reason: 'The URL must not carry a user name or password; verify our signature instead.' };
  const allowedSchemes = mode === 'live' ? ['https:'] : ['https:', 'http:'];
  if (!allowedSchemes.includes(url.protocol)) {
    return { ok: false, reason: mode === 'live' ? 'Live keys need an https URL.' : 'The URL must be http or https.' };
  }
  const host = unbracket(url.hostname);
  if (isLocalhostName(host)) {
    return mode === 'test' ? { ok: true, url: url.toString() } : { ok: false, reason: 'Live keys cannot send webhooks to localhost.' };
  }
  if (isIP(host) && !isAllowedAddress(host, mode)) {
    return { ok: false, reason: `The address ${host} is not a public address (loopback, private, link-local and metadata ranges are refused${mode === 'test' ? '; test keys may use loopback' : ''}).` };
  }
  return { ok: true, url: url.toString() };
}

export type HostLookup = (host: string) => Promise<string[]>;

const systemLookup: HostLookup = async (host) => (await dnsLookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** Resolves the URL's host now and refuses it if any address it resolves to is not allowed. */
export async function resolveEndpointHost(url: string, mode: EndpointMode, lookup: HostLookup = systemLookup): Promise<{ ok: true; addresses: string[] } | { ok: false; reason: string }> {
  const host = unbracket(new URL(url).hostname);
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : isLocalhostName(host) ? ['127.0.0.1'] : await lookup(host);
  } catch (err) {
    return { ok: false, reason: `cannot resolve ${host}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` };
  }
  if (addresses.length === 0) return { ok: false, reason: `cannot resolve ${host}: no addresses` };
  const refused = addresses.find((a) => !isAllowedAddress(a, mode));
  if (refused) return { ok: false, reason: `refused: ${host} resolves to ${refused}, which is not a public address` };
  return { ok: true, addresses };
}
