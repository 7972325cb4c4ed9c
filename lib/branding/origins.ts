/**
 * Origins a shop may allow to frame its pages. They end up in a Content-Security-Policy header
 * (`frame-ancestors <origin> …`), so each is rebuilt from its parsed parts and only a plain host
 * survives: no path, query, wildcard, credentials or IPv6 literal (CSP's host-source grammar has no
 * brackets), and nothing that could end the directive (`;`, `,`, spaces, quotes).
 */

/** Hosts a shop may name over plain http: its own machine, while it tries the page out. */
const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1']);

/** A DNS name as the URL parser writes it (lower case, IDNs as xn--), or a dotted IPv4 address. */
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const isHostName = (host: string) => host.length <= 253 && host.split('.').every((label) => LABEL.test(label));

const EXPECTED = 'expected an origin such as https://shop.example.com or https://shop.example.com:8443';

/** The origin as stored (`https://host[:port]`, default port dropped), or the problem to tell the caller. */
export function checkFrameAncestor(value: string): { value: string } | { problem: string } {
  const text = value.trim();
  if (text.includes('*')) return { problem: `wildcards are not accepted; list each origin (${EXPECTED})` };
  // Scheme, authority and at most a trailing slash: anything after the host is refused, not dropped.
  const parts = /^([a-z][a-z0-9+.-]*):\/\/([^/?#\s]+)\/?$/i.exec(text);
  if (!parts) return { problem: /^[a-z][a-z0-9+.-]*:\/\/[^/?#\s]+[/?#]/i.test(text) ? `an origin has no path, query or fragment; ${EXPECTED}` : EXPECTED };
  if (parts[2]!.includes('@')) return { problem: `an origin has no user name or password; ${EXPECTED}` };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { problem: EXPECTED };
  }
  const local = LOCAL_HOSTS.has(url.hostname);
  if (url.protocol === 'http:' && !local) {
    return { problem: 'must be https (http only for http://localhost or http://127.0.0.1, to try the page on your own machine)' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { problem: `must be https; ${EXPECTED}` };
  if (!isHostName(url.hostname)) return { problem: `the host must be a domain name or an IPv4 address; ${EXPECTED}` };
  return { value: url.origin };
}
