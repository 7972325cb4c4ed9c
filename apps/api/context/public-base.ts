/**
 * The address customers reach this service at, for links it hands out (share links, the payment
 * gateway's return address): `PUBLIC_BASE_URL`, else the address this server listens on. Never
 * the request's `Host` header: whoever sends a request chooses that, so a link built from it could
 * point colleagues or the gateway at any host (issue 29, finding 7).
 */
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from './deps.ts';

/** Answered when the server is not listening (requests injected in process): a link still parses. */
const NOT_LISTENING = 'http://localhost';

export function publicBaseOf(deps: Pick<ApiDeps, 'publicBaseUrl'>, server: FastifyInstance): string {
  if (deps.publicBaseUrl) return deps.publicBaseUrl.replace(/\/+$/, '');
  // A unix socket (a string) names no address a browser could use either.
  const address = server.addresses().find((a) => typeof a !== 'string');
  if (!address || typeof address === 'string') return NOT_LISTENING;
  // Listening on every interface names no host to reach it by: the same choice as notices' links.
  const any = address.address === '0.0.0.0' || address.address === '::';
  const host = any ? 'localhost' : address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}
