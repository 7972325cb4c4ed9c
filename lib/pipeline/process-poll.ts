import { toRows, type PollRows } from '../clickhouse/rows.ts';
import { normalizePollTimed, type RuleSet } from '../normalize/index.ts';
import { parsePollLine } from '../replay/index.ts';
import type { KeyMode } from '../schemas/index.ts';

/** One raw-poll message through the pipeline's steps: rows to write, or the DLQ with a reason. */
export type StepOutcome = { kind: 'rows'; rows: PollRows; unmapped: number } | { kind: 'dlq'; reason: string };

/**
 * Pure: message value → rows for carrier_polls / events / shipments (PostHog-style `ok | dlq`).
 * A value that is not a valid carrier_poll.v1, or names an unknown carrier, goes to the DLQ.
 * `mode` is the message's `mode` header: sandbox and live shipments are stored apart.
 */
export function processPollMessage(value: string | null, rules: RuleSet, resolveCarrier: (name: string) => string | null, mode: KeyMode = 'live'): StepOutcome {
  if (value === null || value === '') return { kind: 'dlq', reason: 'empty message value' };
  const poll = parsePollLine(value, resolveCarrier);
  if (typeof poll === 'string') return { kind: 'dlq', reason: poll };
  const { result, times } = normalizePollTimed(poll, rules);
  try {
    const unmapped = result.kind === 'found' ? result.shipment.facts.unmapped_scans : 0;
    return { kind: 'rows', rows: toRows(poll, result, rules.mappingVersion, mode, times), unmapped };
  } catch (err) {
    return { kind: 'dlq', reason: `cannot store poll: ${(err as Error).message}` };
  }
}
