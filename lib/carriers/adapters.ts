/** The wire protocol of every supported carrier, by canonical slug. */
import { adapter as bluedart } from './bluedart/adapter.ts';
import { adapter as delhivery } from './delhivery/adapter.ts';
import { adapter as dtdc } from './dtdc/adapter.ts';
import { adapter as ekart } from './ekart/adapter.ts';
import { adapter as indiapost } from './indiapost/adapter.ts';
import { adapter as professionalcouriers } from './professionalcouriers/adapter.ts';
import { adapter as shadowfax } from './shadowfax/adapter.ts';
import { adapter as shiprocket } from './shiprocket/adapter.ts';
import { adapter as shreemaruti } from './shreemaruti/adapter.ts';
import { adapter as speedpost } from './speedpost/adapter.ts';
import { adapter as xpressbees } from './xpressbees/adapter.ts';
import type { CarrierAdapter } from './types.ts';

export const ADAPTERS: Readonly<Record<string, CarrierAdapter>> = Object.freeze(
  Object.fromEntries(
    [delhivery, bluedart, dtdc, shiprocket, shreemaruti, indiapost, speedpost, xpressbees, shadowfax, ekart, professionalcouriers]
      .map((adapter) => [adapter.slug, adapter]),
  ),
);

/** The adapter of a canonical carrier slug, or null when the carrier has none. */
export function adapterFor(slug: string): CarrierAdapter | null {
  return Object.hasOwn(ADAPTERS, slug) ? ADAPTERS[slug]! : null;
}
