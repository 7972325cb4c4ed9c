import { toTrackingRecord } from '../insights/index.ts';
import type { RuleSet } from '../normalize/index.ts';
import { normalizePoll } from '../normalize/index.ts';
import { isCertainlyCarrierPoll } from '../schemas/carrier-poll-check.ts';
import { CarrierPollSchema, type CarrierPoll } from '../schemas/index.ts';

export interface ReplayContext {
  rules: RuleSet;
  /** Canonical slug for a slug or alias; null when the carrier is not supported. */
  resolveCarrier(name: string): string | null;
}

export type ReplayOutcome =
  | { kind: 'record' | 'not_found' | 'carrier_error'; output: Record<string, unknown> }
  | { kind: 'invalid'; message: string };

function describeZodIssues(issues: { path: PropertyKey[]; message: string }[]): string {
  return issues
    .slice(0, 3)
    .map((i) => `${i.path.length ? i.path.map(String).join('.') : '(record)'}: ${i.message}`)
    .join('; ');
}

/** Parses one NDJSON line into a valid `carrier_poll.v1`, or says what is wrong with it. */
export function parsePollLine(line: string, resolveCarrier: (name: string) => string | null): CarrierPoll | string {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (err) {
    return `not valid JSON (${(err as Error).message})`;
  }
  const poll = validPoll(value);
  if (typeof poll === 'string') return poll;
  const carrier = resolveCarrier(poll.carrier);
  if (!carrier) return `unsupported carrier "${poll.carrier}"`;
  // The poll is this function's own (fresh from JSON.parse or zod): set in place, no copy.
  poll.carrier = carrier;
  return poll;
}

/**
 * `value` as a carrier_poll.v1, or why it is not one. The precompiled check passes a valid poll as
 * it is, in a fraction of zod's time; zod judges everything else (and says what is wrong).
 */
function validPoll(value: unknown): CarrierPoll | string {
  if (isCertainlyCarrierPoll(value)) return value;
  const parsed = CarrierPollSchema.safeParse(value);
  if (!parsed.success) return `not a valid carrier_poll.v1: ${describeZodIssues(parsed.error.issues)}`;
  return parsed.data;
}

/**
 * One replayed poll: the tracking record the API would have answered, with insights as of the
 * poll's own `polled_at` so the output is deterministic, plus `poll_id`.
 */
export function replayPoll(poll: CarrierPoll, ctx: ReplayContext): ReplayOutcome {
  const result = normalizePoll(poll, ctx.rules);
  if (result.kind === 'error') {
    return { kind: 'carrier_error', output: { poll_id: poll.poll_id, error: { code: 'upstream_error', message: result.error } } };
  }
  if (result.kind === 'not_found') {
    return {
      kind: 'not_found',
      output: { poll_id: poll.poll_id, error: { code: 'shipment_not_found', message: `No tracking scans exist for ${poll.carrier} ${poll.awb}.` } },
    };
  }
  const { record, facts } = result.shipment;
  const tracking = toTrackingRecord(record, facts, { nowMs: Date.parse(poll.polled_at), lane: null, cached: false, stale: false });
  return { kind: 'record', output: { poll_id: poll.poll_id, ...tracking } };
}

export function replayLine(line: string, ctx: ReplayContext): ReplayOutcome {
  const poll = parsePollLine(line, ctx.resolveCarrier);
  if (typeof poll === 'string') return { kind: 'invalid', message: poll };
  return replayPoll(poll, ctx);
}
