import type { KeyStanding, StandingOf } from '../access/standing.ts';
import type { LaneStatsSource } from '../lanes/index.ts';
import type { Predictor } from '../prediction/index.ts';
import type { KeyMode } from '../schemas/index.ts';
import { ChangeDetector, type CurrentShipment } from './detector.ts';
import { Dispatcher, type DispatcherOptions } from './dispatcher.ts';
import { EndpointStore, type EndpointTargetRules } from './endpoints.ts';
import { InProcessEventLog, type EventLog } from './event-log.ts';
import type { WebhookEvent } from './events.ts';
import type { Kv } from '../kv/index.ts';
import { PageLinks } from './page-links.ts';
import { WatchStore } from './watches.ts';

/** Push's parts over one state store; an app starts what it runs (the dispatcher loop, consumers). */
export interface Push {
  kv: Kv;
  watches: WatchStore;
  /** The tracking page's links of watches and orders. */
  pages: PageLinks;
  endpoints: EndpointStore;
  /** Queues, attempts, enabling and resending; its loop runs only where deliveries are made. */
  dispatcher: Dispatcher;
  events: EventLog;
  detector: ChangeDetector;
  /** The key's standing as every worker of push asks it. */
  standing: StandingOf;
  /**
   * A key's standing changed (admin suspend/resume/revoke/renew, a paid renewal): active again →
   * held events go out; revoked → watches, endpoints and queued events are dropped.
   */
  keyChanged(prefix: string, mode: KeyMode, standing: KeyStanding): Promise<void>;
  close(): Promise<void>;
}

export interface PushOptions extends Omit<DispatcherOptions, 'kv' | 'endpoints'> {
  /** lib/access `standingFromStore(access)`: the one rule of whether a key may act now. */
  standing: StandingOf;
  kv: Kv;
  lanes: LaneStatsSource;
  /** The delivery model (insights.prediction, tracking.eta_changed); absent: predictions are null. */
  predictor?: Predictor;
  /** The distributed event log (Kafka); without it events go straight to this process's dispatcher. */
  events?: EventLog;
  /** A shipment's current record (the cache's), for the catch-up of a key that is active again. */
  currentRecord?: (carrier: string, awb: string, mode: KeyMode) => Promise<CurrentShipment | null>;
  /** Where endpoints may point (WEBHOOK_ALLOWED_TARGETS), checked when one is created. */
  targets?: EndpointTargetRules;
  /**
   * Customer notices' intake (lib/buyer-notices): without a distributed event log, this process's
   * events go there too, after the dispatcher's queues have them.
   */
  notices?: { enqueue(events: readonly WebhookEvent[]): Promise<void> };
  /** A watch ended (deleted, or its key revoked): what hangs on it goes too (the customer's contact). */
  onWatchRemoved?: (prefix: string, carrier: string, awb: string) => Promise<void>;
}

export function createPush(options: PushOptions): Push {
  const { kv, lanes, predictor, events: eventLog, targets, currentRecord, notices, onWatchRemoved, ...dispatcherOptions } = options;
  const endpoints = new EndpointStore(kv, Date.now, targets);
  const dispatcher = new Dispatcher({ ...dispatcherOptions, kv, endpoints });
  const events = eventLog ?? new InProcessEventLog(async (batch) => {
    await dispatcher.enqueue(batch);
    await notices?.enqueue(batch);
  });
  const detector = new ChangeDetector({ kv, events, lanes, predictor, standing: options.standing, clock: options.clock ?? Date.now });
  const watches = new WatchStore(kv, onWatchRemoved);
  return {
    kv, watches, pages: new PageLinks(kv), endpoints, dispatcher, events, detector, standing: options.standing,
    async keyChanged(prefix, mode, standing) {
      if (standing === 'active') {
        await dispatcher.resumeKey(prefix);
        if (currentRecord) await detector.catchUp(prefix, currentRecord);
      } else if (standing === 'revoked') {
        const ids = (await endpoints.list(prefix)).map((e) => e.id);
        await watches.removeAll(prefix, mode);
        for (const id of ids) await endpoints.remove(prefix, id);
        await dispatcher.dropKey(prefix, ids);
      }
    },
    async close() {
      await dispatcher.stop();
      await detector.settled();
      await events.close();
      await kv.close();
    },
  };
}
