/**
 * Where a webhook may be sent (contract "Push", URL rules). Every address the host resolves to must
 * be public, for every key, at creation and again at every attempt. `trk_live_` keys: https only;
 * `trk_test_` keys may also use http.
 *
 * Test keys used to reach loopback too, "for a receiver on the developer's own machine". Test keys
 * are free self-serve trials, so that let anyone make the dispatcher POST to every port of its own
 * machine (Redis, Kafka, ClickHouse's HTTP interface, which runs a query given in the URL) and read
 * back each attempt's status: a port scanner and a blind request forger. Only the operator can open
 * private targets now, by address or range (`WEBHOOK_ALLOWED_TARGETS`), for every key mode alike.
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

/** Publicly routable: ipaddr.js range `unicast`, IPv6 in 2000::/3, and no known metadata address. */
export function isPublicAddress(ip: string): boolean {
  const address = parseAddress(ip);
  if (address === null || address.range() !== 'unicast') return false;
  if (address.kind() === 'ipv6') return (address as ipaddr.IPv6).match(IPV6_GLOBAL_UNICAST);
  return !METADATA_ADDRESSES.has(address.toString());
}

/**
 * The non-public addresses and ranges the operator opened (WEBHOOK_ALLOWED_TARGETS), e.g. a receiver
 * on loopback during development. Empty by default: only public addresses.
 */
export type AllowedTargets = readonly [ipaddr.IPv4 | ipaddr.IPv6, number][];

export const NO_PRIVATE_TARGETS: AllowedTargets = [];

/**
 * WEBHOOK_ALLOWED_TARGETS: comma-separated addresses or CIDR ranges ("127.0.0.1/32,::1"). An
 * IPv4-mapped IPv6 range (::ffff:127.0.0.1/128) is kept as its IPv4 range, since addresses are
 * compared in that form. Throws with the entry that is neither.
 */
export function parseAllowedTargets(value: string | undefined): AllowedTargets {
  if (value === undefined || value.trim() === '') return NO_PRIVATE_TARGETS;
  return value.split(',').map((raw) => raw.trim()).filter((entry) => entry !== '').map((entry) => {
    const cidr = entry.includes('/') ? entry : `${entry}/${entry.includes(':') ? 128 : 32}`;
    let range: [ipaddr.IPv4 | ipaddr.IPv6, number];
    try {
      range = ipaddr.parseCIDR(cidr);
    } catch {
      throw new Error(`WEBHOOK_ALLOWED_TARGETS: "${entry}" is not an IP address or CIDR range (e.g. 127.0.0.1/32 or ::1)`);
    }
    const [address, bits] = range;
    if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96) {
      return [(address as ipaddr.IPv6).toIPv4Address(), bits - 96] as [ipaddr.IPv4, number];
    }
    return range;
  });
}

function isOpenedByOperator(ip: string, allowed: AllowedTargets): boolean {
  if (allowed.length === 0) return false;
  const address = parseAddress(ip);
  return address !== null && allowed.some(([base, bits]) => base.kind() === address.kind() && address.match(base, bits));
}

/** Public, or opened by the operator (the same for every key mode: see the module comment). */
export function isAllowedAddress(ip: string, allowed: AllowedTargets = NO_PRIVATE_TARGETS): boolean {
  return isPublicAddress(ip) || isOpenedByOperator(ip, allowed);
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
function literalHostProblem(host: string, allowed: AllowedTargets): string | null {
  if (isLocalhostName(host)) {
    return LOCALHOST_ADDRESSES.some((a) => isAllowedAddress(a, allowed)) ? null : `${host} is a loopback host; webhook targets must be public addresses`;
  }
  if (isIpLiteral(host)) {
    if (isAllowedAddress(host, allowed)) return null;
    return `${host} is ${describeRange(host)}; webhook targets must be public addresses`;
  }
  return null;
}

/** RFC 6761: what localhost names are, without asking DNS. */
const LOCALHOST_ADDRESSES = ['127.0.0.1', '::1'];

/**
 * The URL's syntax, scheme and, for IP literals and localhost names, the address rule. The
 * normalized URL (`URL.href`) comes back to be stored; the reasons are meant for a 400 message.
 */
export function checkEndpointUrl(
  raw: string, mode: KeyMode, allowed: AllowedTargets = NO_PRIVATE_TARGETS,
): { ok: true; url: string } | { ok: false; reason: string } {
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
  const problem = literalHostProblem(host, allowed);
  if (problem !== null) return { ok: false, reason: problem };
  // A single-label name ("intranet") only resolves through the local search domains: never a
  // public receiver (localhost aside, which is told by the operator's opening above).
  if (!isIpLiteral(host) && !host.includes('.') && !isLocalhostName(host)) {
    return { ok: false, reason: `${host} is not a public host name` };
  }
  if (url.href.length > MAX_URL_LENGTH) return { ok: false, reason: `url is longer than ${MAX_URL_LENGTH} characters` };
  return { ok: true, url: url.href };
}

/** True when an address is reachable only because the operator opened it (not public). */
export function isPrivateTarget(addresses: readonly string[]): boolean {
  return addresses.some((a) => !isPublicAddress(a));
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
  allowed: AllowedTargets = NO_PRIVATE_TARGETS,
  lookup: Lookup = systemLookup,
): Promise<{ ok: true; url: string; addresses: string[] } | { ok: false; reason: string }> {
  const checked = checkEndpointUrl(url, mode, allowed);
  if (!checked.ok) return checked;
  const host = hostOf(new URL(checked.url));
  if (isIpLiteral(host)) return { ok: true, url: checked.url, addresses: [host] };
  // Only the loopback addresses the operator opened: connections go to checked addresses only.
  if (isLocalhostName(host)) return { ok: true, url: checked.url, addresses: LOCALHOST_ADDRESSES.filter((a) => isAllowedAddress(a, allowed)) };
  let addresses: string[];
  try {
    addresses = await lookup(host);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return { ok: false, reason: `DNS lookup of ${host} failed${typeof code === 'string' ? ` (${code})` : ''}` };
  }
  if (addresses.length === 0) return { ok: false, reason: `${host} has no addresses` };
  for (const address of addresses) {
    if (!isAllowedAddress(address, allowed)) {
      return { ok: false, reason: `refused: ${host} resolves to ${address}, ${describeRange(address)}` };
    }
  }
  return { ok: true, url: checked.url, addresses };
}
