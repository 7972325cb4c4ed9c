import type { CarrierPoll } from '../schemas/index.ts';
import type { KeyMode } from '../schemas/index.ts';

/** Which carrier network a poll was made against: the sandbox (trk_test_ keys) or the live one. */

export type PollHandler = (poll: CarrierPoll, mode: KeyMode) => Promise<void> | void;

/**
 * Where every carrier poll goes (the raw-poll log). `publish` never blocks or fails the caller:
 * lookups must not wait on the pipeline (design.md).
 */
export interface PollBus {
  publish(poll: CarrierPoll, mode: KeyMode): void;
  /** Resolves once everything published so far has been handed over (tests, shutdown). */
  flush(): Promise<void>;
  close(): Promise<void>;
  /** Whether the log takes polls now, and what waits (readiness, metrics). */
  health(): BusHealth;
}

export interface BusHealth {
  /** Where polls go: Kafka, or this process's own normalizer (the embedded default). */
  target: 'kafka' | 'in-process';
  /** False while the target does not take polls (they wait in the spool). */
  ok: boolean;
  error: string | null;
  /** Polls waiting on disk for Kafka, in bytes. */
  spool_bytes: number;
  /** Age of the oldest poll not yet on Kafka, seconds (0 when none waits). */
  oldest_unsent_age_s: number;
}
