import type { StandingOf } from '../access/standing.ts';
import { isTerminal, isTerminalStage } from '../cache/index.ts';
import { toTrackingRecord } from '../insights/index.ts';
import { laneKey, type LaneStatsSource } from '../lanes/index.ts';
import { scanEventIds, type NormalizeResult } from '../normalize/index.ts';
import { promiseProbabilityOf, queryFactsOf, withPromise, type Predictor } from '../prediction/index.ts';
import type { CarrierPoll, TrackingRecord } from '../schemas/index.ts';
import { changeOf, etaChangeOf, snapshotOf } from './change.ts';
import type { EventLog } from './event-log.ts';
import { trackingEvent, type WebhookEvent } from './events.ts';
import type { Kv } from '../kv/index.ts';
import { pushKeys, shipmentIdOf } from './keys.ts';
import { runningLateOf } from './running-late.ts';
import { expiryOf, promiseOfWatch, type ShipmentDoc, type WatchDoc } from './watches.ts';
import type { KeyMode } from '../schemas/index.ts';

/** A shipment's current record for a catch-up, with its promise's probability as of the record's insights. */
export interface CurrentShipment {
  record: TrackingRecord;
  /** P(delivered by the end of IST day `promisedBy`), null without a prediction (lib/prediction promise.ts). */
  promiseProbability(promisedBy: string): number | null;
}

/** P(delivered by the end of a promised IST day) of the record being stepped; null: not known. */
type PromiseProbability = (promisedBy: string) => number | null;

export interface DetectorDeps {
  kv: Kv;
  events: EventLog;
  lanes: LaneStatsSource;
  /**
   * The watching key's standing now: a key that is not active gets no event, and its watch's state
   * stays as it was, so the first poll after a resume or renewal makes one event with everything
   * that changed meanwhile (contracts.md).
   */
  standing: StandingOf;
  clock: () => number;
  /** The delivery model (insights.prediction, tracking.eta_changed); absent: predictions are null. */
  predictor?: Predictor;
  log?: (message: string, err?: unknown) => void;
}

/**
 * Change detection: every normalized poll of a watched shipment is compared with what each
 * watching key was last told; a change becomes one event with the next sequence of that key and
 * shipment. State and event are written in one atomic step (the event goes into the watch's
 * outbox), then handed to the event log and taken out of the outbox. So:
 * - a re-delivered or replayed poll, or a second normalizer, finds the state already moved on and
 *   makes no second event (the poll's time is not newer than the state's);
 * - an older poll arriving late is ignored for the same reason;
 * - a crash between the two steps leaves the event in the outbox, handed over by the next poll of
 *   the shipment or by `sweep` (same id, so a receiver sees at most a duplicate of one webhook-id).
 * Insights are computed as of the poll's time, so `is_stuck` turns true at the first poll after
 * 72 h without a scan, and a re-derived event is byte-identical.
 */
/** New event id → the id it had before location was part of it (snapshots may hold those). */
function legacyEventIds(poll: CarrierPoll, awb: string): Map<string, string> {
  const ids = new Map<string, string>();
  for (const scan of poll.scans) {
    const { id, legacyId } = scanEventIds(poll.carrier, awb, scan);
    ids.set(id, legacyId);
  }
  return ids;
}

export class ChangeDetector {
  /**
   * Outboxes being emptied after their events went on the log, per watch. `handle` answers once
   * the events are on the log (the poll's offset may then be committed) and leaves this step
   * behind: it is only tidying, and a crash before it makes at most a duplicate of the same
   * webhook-id (the sweep hands the events over again; queues take an id once). The next poll of
   * the same watch waits for it, so it never hands over what was just handed over.
   */
  private readonly tidying = new Map<string, Promise<void>>();

  private readonly deps: DetectorDeps;
  constructor(deps: DetectorDeps) {
    this.deps = deps;
  }

  /** Resolves once every outbox handed over so far was emptied (tests; a clean stop). */
  async settled(): Promise<void> {
    while (this.tidying.size > 0) await Promise.all([...this.tidying.values()]);
  }

  /** Handles one poll with its normalization; resolves once its events are on the event log. */
  async handle(poll: CarrierPoll, mode: KeyMode, result: NormalizeResult): Promise<number> {
    const { kv } = this.deps;
    const shipmentId = shipmentIdOf(mode, poll.carrier, poll.awb);
    const polledMs = Date.parse(poll.polled_at);
    const found = result.kind === 'found' ? result.shipment : null;
    // One read for every poll; a write only for watched shipments.
    const shipment = await kv.update<ShipmentDoc, ShipmentDoc | null>(pushKeys.shipment(shipmentId), (doc) => {
      if (!doc) return { result: null };
      const next: ShipmentDoc = {
        ...doc,
        last_polled_ms: Math.max(doc.last_polled_ms, polledMs),
        terminal: found && polledMs >= doc.last_polled_ms ? isTerminal(found) : doc.terminal,
      };
      return { next, result: next };
    });
    if (!shipment || !found) return 0;

    const lane = found.facts.lane ? await this.deps.lanes.get(laneKey(found.facts.lane, mode)) : null;
    const prediction = this.deps.predictor?.predictRecord(found.record, found.facts, mode, polledMs) ?? null;
    const record = toTrackingRecord(found.record, found.facts, { nowMs: polledMs, lane, prediction, cached: false, stale: false });
    const terminal = isTerminal(found);
    const legacyIds = legacyEventIds(poll, record.awb);
    const predictor = this.deps.predictor;
    // Read as the record's own prediction above was (the latest scan placed), so the promise's probability is the same cell's.
    const query = predictor ? predictor.factsOf(found.record, found.facts) : queryFactsOf(found.record, found.facts);
    const promiseOf: PromiseProbability = (day) => promiseProbabilityOf(predictor, query, found.facts, mode, polledMs, day);
    let published = 0;
    const now = this.deps.clock();
    for (const [prefix, until] of Object.entries(shipment.watchers)) {
      if (until <= polledMs) continue;
      if ((await this.deps.standing(prefix, now)) !== 'active') continue;
      published += await this.stepWatch(prefix, mode, poll.carrier, record, promiseOf, polledMs, terminal, legacyIds.get.bind(legacyIds));
    }
    return published;
  }

  /**
   * A key is active again: each of its watches whose shipment changed while it was paused gets
   * one event now, from the shipment's current record (`current`), so a shipment that reached a
   * terminal state meanwhile (and is polled no more) is not left untold.
   */
  async catchUp(prefix: string, current: (carrier: string, awb: string, mode: KeyMode) => Promise<CurrentShipment | null>): Promise<number> {
    const { kv } = this.deps;
    let published = 0;
    for (const name of await kv.setMembers(pushKeys.watchIndex(prefix))) {
      const doc = await kv.get<WatchDoc>(pushKeys.watchOf(prefix, name));
      if (!doc) continue;
      const shipment = await current(doc.carrier, doc.awb, doc.mode);
      if (!shipment) continue;
      const { record } = shipment;
      const polledMs = Date.parse(record.last_polled_at);
      const terminal = isTerminalStage(record.insights.current_stage);
      published += await this.stepWatch(prefix, doc.mode, doc.carrier, record, (day) => shipment.promiseProbability(day), polledMs, terminal, () => undefined);
    }
    return published;
  }

  /**
   * One watch's step for a record polled at `polledMs`: its state moves on and, when something
   * changed since what the key was last told, the event goes into its outbox in the same step.
   */
  private async stepWatch(
    prefix: string, mode: KeyMode, carrier: string, shipmentRecord: TrackingRecord, promiseOf: PromiseProbability, polledMs: number, terminal: boolean,
    legacyIdOf: (id: string) => string | undefined,
  ): Promise<number> {
    const { kv } = this.deps;
    const watchKey = pushKeys.watch(prefix, carrier, shipmentRecord.awb);
    await this.tidying.get(watchKey);
    const outbox = await kv.update<WatchDoc, WebhookEvent[]>(watchKey, (doc) => {
      if (!doc) return { result: [] };
      if (polledMs <= doc.snapshot.polled_ms || polledMs >= doc.expires_ms) return { result: doc.outbox };
      // This watch's record: the shipment's, with the shop's promise when the watch has one.
      const { promised_by: promisedBy, running_late_below: threshold } = promiseOfWatch(doc);
      const probability = promisedBy === null || shipmentRecord.insights.prediction === null ? null : promiseOf(promisedBy);
      const record = withPromise(shipmentRecord, probability === null ? null : { promised_by: promisedBy!, on_time_probability: probability });
      const terminalMs = doc.terminal_ms ?? (terminal ? polledMs : null);
      const base = { ...doc, snapshot: snapshotOf(record, polledMs), terminal_ms: terminalMs, expires_ms: expiryOf(doc.watched_since_ms, terminalMs) };
      const change = changeOf(doc.snapshot, record, legacyIdOf);
      // A moved delivery day and a fall below the on-time threshold are events of their own
      // (subscribable apart), after the change's if several.
      const eta = etaChangeOf(doc, record, polledMs);
      const late = runningLateOf(doc, record, promisedBy, threshold);
      const stepped = { ...base, ...eta.next, ...late.next };
      if (!change && !eta.changed && !late.late) return { next: stepped, result: doc.outbox };
      const made: WebhookEvent[] = [];
      let sequence = doc.sequence;
      if (change) {
        sequence++;
        made.push(trackingEvent({
          keyPrefix: prefix, mode, type: change.type, sequence, previous: change.previous, newEvents: change.newEvents, tracking: record, atMs: polledMs,
        }));
      }
      if (eta.changed) {
        sequence++;
        const previous = { status: doc.snapshot.status ?? record.status, current_stage: doc.snapshot.stage ?? record.insights.current_stage };
        made.push(trackingEvent({
          keyPrefix: prefix, mode, type: 'tracking.eta_changed', sequence, previous, newEvents: [], tracking: record,
          previousDeliveryDate: eta.changed.previous, atMs: polledMs,
        }));
      }
      if (late.late) {
        sequence++;
        const previous = { status: doc.snapshot.status ?? record.status, current_stage: doc.snapshot.stage ?? record.insights.current_stage };
        made.push(trackingEvent({
          keyPrefix: prefix, mode, type: 'tracking.running_late', sequence, previous, newEvents: [], tracking: record, late: late.late, atMs: polledMs,
        }));
      }
      const next = { ...stepped, sequence, outbox: [...doc.outbox, ...made] };
      return { next, result: next.outbox };
    });
    return this.handOver(watchKey, outbox, false);
  }

  /**
   * Hands events of a watch's outbox to the event log, then takes them out of the outbox (after
   * answering, unless `wait`: see `tidying`).
   */
  private async handOver(watchKey: string, outbox: readonly WebhookEvent[], wait = true): Promise<number> {
    if (outbox.length === 0) return 0;
    const { kv } = this.deps;
    await kv.setAdd(pushKeys.outboxPending(), watchKey);
    await this.deps.events.publish(outbox);
    const tidy = this.takeOut(watchKey, outbox)
      .catch((err: unknown) => this.deps.log?.('push outbox: emptying after hand-over failed (the sweep retries)', err));
    if (wait) await tidy;
    else {
      const tracked = tidy.finally(() => { if (this.tidying.get(watchKey) === tracked) this.tidying.delete(watchKey); });
      this.tidying.set(watchKey, tracked);
    }
    return outbox.length;
  }

  private async takeOut(watchKey: string, outbox: readonly WebhookEvent[]): Promise<void> {
    const { kv } = this.deps;
    const sent = new Set(outbox.map((e) => e.id));
    const left = await kv.update<WatchDoc, number>(watchKey, (doc) => {
      if (!doc) return { result: 0 };
      const rest = doc.outbox.filter((e) => !sent.has(e.id));
      return rest.length === doc.outbox.length ? { result: rest.length } : { next: { ...doc, outbox: rest }, result: rest.length };
    });
    if (left === 0) await kv.setRemove(pushKeys.outboxPending(), watchKey);
  }

  /** Hands over outboxes a crash left behind (at start and now and then). */
  async sweep(): Promise<number> {
    const { kv } = this.deps;
    let handed = 0;
    for (const watchKey of await kv.setMembers(pushKeys.outboxPending())) {
      const doc = await kv.get<WatchDoc>(watchKey);
      if (!doc || doc.outbox.length === 0) {
        await kv.setRemove(pushKeys.outboxPending(), watchKey);
        continue;
      }
      handed += await this.handOver(watchKey, doc.outbox);
    }
    return handed;
  }
}
