import type { LaneStatsSource } from '../lanes/index.ts';
import { ChangeDetector } from './detector.ts';
import { Dispatcher, type DispatcherOptions } from './dispatcher.ts';
import { EndpointStore, type EndpointTargetRules } from './endpoints.ts';
import { InProcessEventLog, type EventLog } from './event-log.ts';
import type { PushKv } from './kv.ts';
import { WatchStore } from './watches.ts';

/** Push's parts over one state store; an app starts what it runs (the dispatcher loop, consumers). */
export interface Push {
  kv: PushKv;
  watches: WatchStore;
  endpoints: EndpointStore;
  /** Queues, attempts, enabling and resending; its loop runs only where deliveries are made. */
  dispatcher: Dispatcher;
  events: EventLog;
  detector: ChangeDetector;
  close(): Promise<void>;
}

export interface PushOptions extends Omit<DispatcherOptions, 'kv' | 'endpoints'> {
  kv: PushKv;
  lanes: LaneStatsSource;
  /** The distributed event log (Kafka); without it events go straight to this process's dispatcher. */
  events?: EventLog;
  /** Where endpoints may point (WEBHOOK_ALLOWED_TARGETS), checked when one is created. */
  targets?: EndpointTargetRules;
}

export function createPush(options: PushOptions): Push {
  const { kv, lanes, events: eventLog, targets, ...dispatcherOptions } = options;
  const endpoints = new EndpointStore(kv, Date.now, targets);
  const dispatcher = new Dispatcher({ ...dispatcherOptions, kv, endpoints });
  const events = eventLog ?? new InProcessEventLog((batch) => dispatcher.enqueue(batch));
  const detector = new ChangeDetector({ kv, events, lanes, clock: options.clock ?? Date.now });
  return {
    kv, watches: new WatchStore(kv), endpoints, dispatcher, events, detector,
    async close() {
      await dispatcher.stop();
      await detector.settled();
      await events.close();
      await kv.close();
    },
  };
}
