import type { CarrierPoll } from '../schemas/index.ts';
import type { PollBus, PollHandler } from './types.ts';
import type { KeyMode } from '../schemas/index.ts';

/**
 * The embedded default's bus: polls go to in-process subscribers (the normalizer) after the
 * current request, in publish order. A failing subscriber is reported, never thrown at publishers.
 */
export function createInProcessBus(onError: (err: unknown) => void = () => {}): PollBus & { subscribe(handler: PollHandler): void } {
  const handlers: PollHandler[] = [];
  let chain: Promise<void> = Promise.resolve();
  return {
    subscribe(handler) {
      handlers.push(handler);
    },
    publish(poll: CarrierPoll, mode: KeyMode) {
      chain = chain.then(async () => {
        for (const handler of handlers) {
          try {
            await handler(poll, mode);
          } catch (err) {
            onError(err);
          }
        }
      });
    },
    flush() {
      return chain;
    },
    async close() {
      await chain;
    },
    health() {
      return { target: 'in-process', ok: true, error: null, spool_bytes: 0, oldest_unsent_age_s: 0 };
    },
  };
}
