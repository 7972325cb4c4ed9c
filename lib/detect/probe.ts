/**
 * Settling an ambiguous number by asking the candidate carriers in turn (contracts.md: at most 3
 * carrier polls). The asking is the caller's `probe` (cache or carrier); this decides the order and
 * when to stop, so it is tested without I/O.
 */

/** Carriers asked at most per detected lookup. */
export const MAX_PROBES = 3;

/** What one carrier said about the number: the shape of lib/tracking's LookupResult. */
export type ProbeAnswer<F> = F | { kind: 'not_found' } | { kind: 'upstream_error'; reason: string };

export type ProbeOutcome<F> =
  /** The first carrier (in candidate order) that knows the number. */
  | { kind: 'found'; slug: string; answer: F; tried: string[] }
  /** Every carrier asked answered "no such number". */
  | { kind: 'not_found'; tried: string[] }
  /** None knew it and at least one could not be asked: "not found" would be a guess. */
  | { kind: 'upstream_error'; tried: string[]; unreachable: string[]; reason: string };

/**
 * Asks `candidates` one after another (best first, at most MAX_PROBES) until one knows the number.
 * A carrier that is down does not stop the search: a later one may know the number.
 */
export async function probeCandidates<F extends { kind: 'found' }>(
  candidates: readonly string[],
  probe: (slug: string) => Promise<ProbeAnswer<F>>,
  maxProbes = MAX_PROBES,
): Promise<ProbeOutcome<F>> {
  const tried: string[] = [];
  const unreachable: string[] = [];
  let reason = '';
  for (const slug of candidates.slice(0, maxProbes)) {
    tried.push(slug);
    const answer = await probe(slug);
    if (answer.kind === 'found') return { kind: 'found', slug, answer: answer as F, tried };
    if (answer.kind === 'upstream_error') {
      unreachable.push(slug);
      reason = (answer as { reason: string }).reason;
    }
  }
  return unreachable.length > 0 ? { kind: 'upstream_error', tried, unreachable, reason } : { kind: 'not_found', tried };
}
