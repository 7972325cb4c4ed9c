/**
 * Where each carrier is asked, and with which credentials. Real base URLs are kept here, in one
 * place, so a wrong guess is a one-line fix: carrier-formats.md names paths but no hosts, so every
 * host below is *unconfirmed* (from public client libraries) until a carrier contract confirms it.
 * Live endpoints read `CARRIER_<SLUG>_URL` (overrides the constant) and `CARRIER_<SLUG>_<NAME>` for
 * each credential name; `trk_test_` lookups and the embedded default use the sandbox network.
 */
import type { CarrierEndpoint } from './types.ts';

export interface CarrierEndpointInfo {
  /** Base URL the adapter appends its paths to. */
  baseUrl: string;
  /** False while no carrier document confirms the host. */
  confirmed: boolean;
  /** Credential names the carrier's adapter reads from `endpoint.credentials`. */
  credentials: readonly string[];
}

export const CARRIER_ENDPOINTS: Readonly<Record<string, CarrierEndpointInfo>> = {
  delhivery: { baseUrl: 'https://track.delhivery.com', confirmed: false, credentials: ['token'] },
  // The API gateway's host; the legacy servlet (used when clientid/clientsecret are not set) lives on
  // another host: set CARRIER_BLUEDART_URL to it (e.g. https://api.bluedart.com).
  bluedart: { baseUrl: 'https://apigateway.bluedart.com', confirmed: false, credentials: ['loginid', 'lickey', 'clientid', 'clientsecret'] },
  dtdc: { baseUrl: 'https://blktracksvc.dtdc.com/dtdc-api', confirmed: false, credentials: ['username', 'password'] },
  shiprocket: { baseUrl: 'https://apiv2.shiprocket.in', confirmed: false, credentials: ['token'] },
  shreemaruti: { baseUrl: 'https://api.shreemaruti.com', confirmed: false, credentials: ['email', 'password'] },
  indiapost: { baseUrl: 'https://api.cept.gov.in', confirmed: false, credentials: ['username', 'password'] },
  speedpost: { baseUrl: 'https://api.cept.gov.in', confirmed: false, credentials: ['username', 'password'] },
  xpressbees: { baseUrl: 'https://shipment.xpressbees.com', confirmed: false, credentials: ['token'] },
  shadowfax: { baseUrl: 'https://dale.shadowfax.in', confirmed: false, credentials: ['token'] },
  ekart: { baseUrl: 'https://api.ekartlogistics.com', confirmed: false, credentials: ['token', 'merchant_code'] },
  professionalcouriers: { baseUrl: 'https://www.tpcindia.com', confirmed: false, credentials: [] },
};

/** The value every credential takes in the sandbox (its routes accept it). */
export const SANDBOX_CREDENTIAL = 'sandbox';

function infoOf(slug: string): CarrierEndpointInfo {
  const info = Object.hasOwn(CARRIER_ENDPOINTS, slug) ? CARRIER_ENDPOINTS[slug] : undefined;
  if (!info) throw new Error(`no endpoint known for carrier "${slug}"`);
  return info;
}

const envName = (slug: string, name: string) => `CARRIER_${slug.toUpperCase()}_${name.toUpperCase()}`;

/** The real carrier, with credentials from the environment (absent ones are left out). */
export function liveEndpoint(slug: string, env: Readonly<Record<string, string | undefined>>): CarrierEndpoint {
  const info = infoOf(slug);
  const credentials: Record<string, string> = {};
  for (const name of info.credentials) {
    const value = env[envName(slug, name)];
    if (value !== undefined && value !== '') credentials[name] = value;
  }
  const baseUrl = env[envName(slug, 'url')] || info.baseUrl;
  return { baseUrl: baseUrl.replace(/\/+$/, ''), credentials };
}

/** The carrier's part of the sandbox network at `sandboxUrl`, every credential `sandbox`. */
export function sandboxEndpoint(slug: string, sandboxUrl: string): CarrierEndpoint {
  const info = infoOf(slug);
  return {
    baseUrl: `${sandboxUrl.replace(/\/+$/, '')}/${slug}`,
    credentials: Object.fromEntries(info.credentials.map((name) => [name, SANDBOX_CREDENTIAL])),
  };
}
