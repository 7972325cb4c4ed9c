import type { CarrierPoll } from '../schemas/index.ts';

export type PollHandler = (poll: CarrierPoll) => Promise<void> | void;

/**
 * Where every carrier poll goes (the raw-poll log). `publish` never blocks or fails the caller:
 * lookups must not wait on the pipeline (design.md).
 */
export interface PollBus {
  publish(poll: CarrierPoll): void;
  /** Resolves once everything published so far has been handed over (tests, shutdown). */
  flush(): Promise<void>;
  close(): Promise<void>;
}
