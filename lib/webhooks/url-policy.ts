/**
 * Where a webhook may be sent (contract "Push", URL rules). `trk_live_` keys: https only, and every
 * address the host resolves to must be public, at creation and again at every attempt. `trk_test_`
 * keys may also use http and loopback, for a receiver on the developer's own machine.
 *
 * Test keys get loopback and nothing else beyond public addresses: private (10/8, 172.16/12,
 * 192.168/16), CGNAT, link-local (cloud metadata) and unique-local addresses are refused for them
 * too. Test keys are self-serve trials; allowing private ranges would let anyone with a trial key
 * probe the network the dispatcher runs in, while a local receiver only ever needs loopback.
 *
 * Pure checks apart from `resolveEndpointHost`, which asks DNS (or an injected lookup).
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import type { KeyMode } from '../schemas/index.ts';

export type Lookup = (host: string) => Promise<string[]>;

const MAX_URL_LENGTH = 2048;

/**
 * Public-looking addresses that still reach a cloud provider's host services; ipaddr.js calls them
 * unicast. Azure's WireServer (168.63.129.16) answers from inside every VM.
 */
const METADATA_ADDRESSES: ReadonlySet<string> = new Set(['168.63.129.16']);

/** IPv6 global unicast space (2000::/3): everything else (deprecated ::/96, fec0::/10...) is refused. */
const IPV6_GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR('2000::/3');

/** An address as ipaddr.js sees it, IPv4-mapped IPv6 (::ffff:a.b.c.d) turned into its IPv4 address. */
function parseAddress(ip: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  const bare = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  // Strict forms only: ipaddr.isValid also accepts "127.1" or "0x7f.0.0.1", which are never what a
  // resolver returns; URL hosts in those forms are normalized by the URL parser before they get here.
  if (!ipaddr.IPv4.isValidFourPartDecimal(bare) && !(ipaddr.IPv6.isValid(bare) && !bare.includes('%'))) return null;
  const parsed = ipaddr.parse(bare);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    return (parsed as ipaddr.IPv6).toIPv4Address();
  }
  return parsed;
}

/** The ipaddr.js range name of an address ("private", "loopback", "linkLocal"...), or null if not an address. */
function rangeOf(ip: string): string | null {
  return parseAddress(ip)?.range() ?? null;
}

/** Publicly routable: ipaddr.js range `unicast`, IPv6 in 2000::/3, and no known metadata address. */
export function isPublicAddress(ip: string): boolean {
  const address = parseAddress(ip);
  if (address === null || address.range() !== 'unicast') return false;
  if (address.kind() === 'ipv6') return (address as ipaddr.IPv6).match(IPV6_GLOBAL_UNICAST);
  return !METADATA_ADDRESSES.has(address.toString());
}

function isLoopbackAddress(ip: string): boolean {
  return rangeOf(ip) === 'loopback';
}

/** live: public addresses only; test: public or loopback (see the module comment for why not private). */
export function isAllowedAddress(ip: string, mode: KeyMode): boolean {
  return isPublicAddress(ip) || (mode === 'test' && isLoopbackAddress(ip));
}

/** Words for a refused address, for error messages: "a private address", "a loopback address"... */
function describeRange(ip: string): string {
  const address = parseAddress(ip);
  if (address === null) return 'not an IP address';
  if (address.kind() === 'ipv4' && METADATA_ADDRESSES.has(address.toString())) return 'a cloud metadata address';
  const names: Record<string, string> = {
    loopback: 'a loopback address',
    private: 'a private address',
    linkLocal: 'a link-local address (cloud metadata range)',
    carrierGradeNat: 'a carrier-grade NAT address',
    uniqueLocal: 'a unique-local address',
    multicast: 'a multicast address',
    unspecified: 'an unspecified address',
    broadcast: 'a broadcast address',
    reserved: 'a reserved address',
  };
  return names[address.range()] ?? 'not a public address';
}

/** The host of a URL without IPv6 brackets or a trailing root dot, lower case. */
function hostOf(url: URL): string {
  let host = url.hostname.toLowerCase();
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  if (host.endsWith('.')) host = host.slice(0, -1);
  return host;
}

/** RFC 6761: `localhost` and names under it are loopback, whatever DNS says. */
function isLocalhostName(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost');
}

function isIpLiteral(host: string): boolean {
  return parseAddress(host) !== null;
}

/**
 * The address rule for a host, as far as it can be told without DNS: IP literals and localhost
 * names. null when allowed (or when only DNS can tell).
 */
function literalHostProblem(host: string, mode: KeyMode): string | null {
  if (isLocalhostName(host)) {
    return mode === 'test' ? null : `${host} is a loopback host, not allowed for trk_live_ keys`;
  }
  if (isIpLiteral(host)) {
    if (isAllowedAddress(host, mode)) return null;
    const allowed = mode === 'live' ? 'trk_live_ keys need a public address' : 'trk_test_ keys may use public or loopback addresses';
    return `${host} is ${describeRange(host)}; ${allowed}`;
  }
  return null;
}

/**
 * The URL's syntax, scheme and, for IP literals and localhost names, the address rule. The
 * normalized URL (`URL.href`) comes back to be stored; the reasons are meant for a 400 message.
 */
export function checkEndpointUrl(raw: string, mode: KeyMode): { ok: true; url: string } | { ok: false; reason: string } {
  if (typeof raw !== 'string' || raw.trim() === '') return { ok: false, reason: 'url is empty' };
  if (raw.length > MAX_URL_LENGTH) return { ok: false, reason: `url is longer than ${MAX_URL_LENGTH} characters` };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'url is not an absolute URL (expected https://host/path)' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return { ok: false, reason: `url scheme ${url.protocol.replace(/:$/, '')} is not allowed; use https` };
  }
  if (url.protocol === 'http:' && mode === 'live') {
    return { ok: false, reason: 'trk_live_ keys need an https url (http is allowed for trk_test_ keys only)' };
  }
  if (url.username !== '' || url.password !== '') {
    return { ok: false, reason: 'url must not contain a user name or password' };
  }
  const host = hostOf(url);
  if (host === '') return { ok: false, reason: 'url has no host' };
  const problem = literalHostProblem(host, mode);
  if (problem !== null) return { ok: false, reason: problem };
  // A single-label name ("intranet") only resolves through the local search domains: never a
  // public receiver.
  if (mode === 'live' && !isIpLiteral(host) && !host.includes('.')) {
    return { ok: false, reason: `${host} is not a public host name` };
  }
  if (url.href.length > MAX_URL_LENGTH) return { ok: false, reason: `url is longer than ${MAX_URL_LENGTH} characters` };
  return { ok: true, url: url.href };
}

/** Every address of a host (IPv4 and IPv6), as `dns.lookup` (the system resolver) returns them. */
export const systemLookup: Lookup = async (host) => (await dnsLookup(host, { all: true, verbatim: true })).map((a) => a.address);

/**
 * Resolves the URL's host to ALL its addresses and refuses it if ANY is not allowed: a host with one
 * private address among public ones could be connected to the private one. IP literals are checked
 * as they are; localhost names are 127.0.0.1 and ::1 (RFC 6761) without asking DNS.
 */
export async function resolveEndpointHost(
  url: string,
  mode: KeyMode,
  lookup: Lookup = systemLookup,
): Promise<{ ok: true; addresses: string[] } | { ok: false; reason: string }> {
  const checked = checkEndpointUrl(url, mode);
  if (!checked.ok) return checked;
  const host = hostOf(new URL(checked.url));
  if (isIpLiteral(host)) return { ok: true, addresses: [host] };
  if (isLocalhostName(host)) return { ok: true, addresses: ['127.0.0.1', '::1'] };
  let addresses: string[];
  try {
    addresses = await lookup(host);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return { ok: false, reason: `DNS lookup of ${host} failed${typeof code === 'string' ? ` (${code})` : ''}` };
  }
  if (addresses.length === 0) return { ok: false, reason: `${host} has no addresses` };
  for (const address of addresses) {
    if (!isAllowedAddress(address, mode)) {
      return { ok: false, reason: `refused: ${host} resolves to ${address}, ${describeRange(address)}` };
    }
  }
  return { ok: true, addresses };
}
