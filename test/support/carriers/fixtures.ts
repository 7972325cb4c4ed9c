/**
 * Carrier bodies kept as files under `lib/carriers/<slug>/fixtures/` (real bodies copied from
 * ../shared/spec/real-bodies with their SOURCES.md, and bodies written in the same real shape), and
 * the one way tests turn them into the poll the product would publish: through `poll()` itself, so
 * redaction and error wording are the real ones.
 */
import { readFileSync } from 'node:fs';
import type { CarrierPoll } from '../../../lib/schemas/index.ts';
import { createCarrierPoller } from '../../../lib/carriers/poll.ts';
import type { CarrierAdapter, NativeResponse } from '../../../lib/carriers/types.ts';

const FIXTURES = new URL('../../../lib/carriers/', import.meta.url);

/** The text of `lib/carriers/<slug>/fixtures/<name>`. */
export function fixtureText(slug: string, name: string): string {
  return readFileSync(new URL(`${slug}/fixtures/${name}`, FIXTURES), 'utf8');
}

/** A fixture as the carrier's HTTP answer. */
export function fixtureResponse(slug: string, name: string, status = 200, contentType = 'application/json'): NativeResponse {
  return { status, headers: { 'content-type': contentType }, body: fixtureText(slug, name) };
}

/** Polled at a fixed instant (2026-11-23T06:30:00Z) unless `polledAt` says otherwise. */
export const FIXTURE_POLLED_AT = '2026-11-23T06:30:00.000Z';

/**
 * The carrier_poll.v1 that `poll()` publishes when the carrier answers `response`: the adapter's own
 * parser, the shared redaction and the poll contract check all run; only the HTTP call is replaced.
 */
export async function pollAnswer(adapter: CarrierAdapter, awb: string, response: NativeResponse, polledAt = FIXTURE_POLLED_AT): Promise<CarrierPoll> {
  const answering: CarrierAdapter = { ...adapter, fetch: async () => response };
  const poller = createCarrierPoller({
    adapters: { [adapter.slug]: answering },
    env: {},
    clock: () => Date.parse(polledAt),
    newId: () => '00000000-0000-4000-8000-000000000000',
  });
  try {
    return await poller.poll(adapter.slug, awb);
  } finally {
    await poller.close();
  }
}
