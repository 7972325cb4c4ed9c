import { isGone, type StandingOf } from '../access/standing.ts';
import { withoutRepeats, type LineLog } from '../logging/index.ts';
import type { EndpointDoc, EndpointStore, DisabledReason } from './endpoints.ts';
import { healthAfter, signingSecrets, subscribes } from './endpoints.ts';
import { shipmentKeyOf, type WebhookEvent } from './events.ts';
import type { Kv } from '../kv/index.ts';
import type { AttemptRowOutbox, DeliveryRow } from './attempt-rows.ts';
import { dueMember, parseDueMember, pushKeys } from './keys.ts';
import { DEFAULT_RETRY_SCHEDULE_SECONDS, retryDelayMs } from './retry.ts';
import { keyVisibleError, type DeliveryOutcome, type DeliveryRequest } from './sender.ts';
import { signatureHeaders } from './signing.ts';
import { DAY_MS } from '../time/index.ts';

export type { DeliveryRow };

/** Events are kept this long for re-sends and for endpoints that are disabled (contracts.md: 7 days). */
export const EVENT_RETENTION_MS = 8 * DAY_MS;
export const DISABLED_KEEP_MS = 7 * DAY_MS;
export const FAILING_LIMIT_MS = 3 * DAY_MS;
/** Latest attempts kept per endpoint for `GET /v1/webhooks/{id}/deliveries`. */
export const ATTEMPTS_KEPT = 100;

/** One endpoint's queue of one shipment: events in sequence order, the head being tried. */
export interface QueueDoc {
  pending: { id: string; seq: number; forced: boolean; created_ms: number }[];
  /** Sequence of the last event delivered or given up: a re-delivered older event is not queued again. */
  last_done_seq: number;
  /** Failed attempts of the head so far. */
  attempt: number;
  /** Attempts of the head begun so far, where attempt rows are kept durably (one cut short by a kill counts). */
  begun?: number;
  /** When the head may be tried. */
  next_ms: number;
}

/** An attempt as `GET /v1/webhooks/{id}/deliveries` shows it. */
export interface AttemptView {
  event_id: string;
  type: string;
  /** The shipment the event was about (null for `webhook.test` and key-level events). */
  carrier: string | null;
  awb: string | null;
  attempt: number;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  attempted_at: string;
  /** Null when delivered, given up, or waiting for the endpoint to be enabled. */
  next_attempt_at: string | null;
}


export interface DeliverySender {
  send(request: DeliveryRequest): Promise<DeliveryOutcome>;
}

export interface DispatcherOptions {
  kv: Kv;
  endpoints: EndpointStore;
  sender: DeliverySender;
  /**
   * The key's standing, asked right before every attempt (lib/access `standingFromStore`): a key
   * that is not active gets nothing sent; a revoked one's queue is dropped.
   */
  standing: StandingOf;
  clock?: () => number;
  /** Seconds after each failed attempt (WEBHOOK_RETRY_SCHEDULE). */
  retrySchedule?: readonly number[];
  /**
   * Every attempt (ClickHouse webhook_deliveries in distributed mode), with its member in `rows`
   * when rows are kept durably until written.
   */
  onAttempt?: (row: DeliveryRow, rowMember: string | null) => void;
  /** Keeps every attempt's row in the store from before the send until it is written (attempt-rows.ts). */
  rows?: AttemptRowOutbox;
  /** An endpoint was disabled (410 or 3 days of failures): tell the key's owner. */
  onDisabled?: (endpoint: EndpointDoc, reason: DisabledReason) => Promise<void>;
  log?: (level: 'info' | 'warn' | 'error', message: string) => void;
  /** A claimed queue is another dispatcher's only after this (longer than an attempt's 15 s timeout). */
  leaseMs?: number;
  /** Attempts in flight in this process, and per endpoint (one slow endpoint cannot take them all). */
  maxInFlight?: number;
  perEndpoint?: number;
  /** How often an idle dispatcher looks for due work (work enqueued in this process wakes it at once). */
  idleMs?: number;
}

/** Free room (in attempts) that makes the loop claim again at once rather than at its next tick. */
const CLAIM_BATCH = 16;
/** Queues held per endpoint, and in all, beyond which a claimed queue goes back on the schedule. */
const HELD_PER_ENDPOINT = 1_024;
const HELD_IN_ALL = 4_096;
/**
 * Lease an attempt needs left when it starts: the sender's 15 s timeout plus the store steps that
 * record the outcome. A held queue with less goes back on the schedule instead of starting: its
 * lease could end mid-attempt and another dispatcher would send the same event again.
 */
const ATTEMPT_LEASE_MS = 20_000;
/** How far back on the schedule a queue goes when its endpoint's hold is full. */
const DEFER_MS = 1_000;

/** A queue claimed while its endpoint had all it may have in flight. */
interface Held {
  member: string;
  prefix: string;
  shipment: string;
  claimedMs: number;
  leaseUntil: number;
}

const isOk = (status: number | null) => status !== null && status >= 200 && status < 300;

/**
 * Delivery: events are queued per endpoint and shipment (in sequence order) in the state store,
 * and queues with a due head are in one schedule. Any number of dispatchers claim due queues with
 * a lease, try the head, and record the outcome: success moves to the next event; a failure waits
 * on the retry ladder (or the receiver's Retry-After), and after the last step the event is given
 * up; a 410 disables the endpoint and its events wait for it to be enabled again (7 days). Nothing
 * lives only in memory: a dispatcher killed mid-attempt leaves the queue leased, and another (or
 * itself, restarted) tries the same event again once the lease ends, with the same webhook-id.
 */
export class Dispatcher {
  private readonly kv: Kv;
  private readonly clock: () => number;
  private readonly schedule: readonly number[];
  private readonly leaseMs: number;
  private readonly maxInFlight: number;
  private readonly perEndpoint: number;
  private readonly idleMs: number;
  private inFlight = 0;
  private readonly inFlightPerEndpoint = new Map<string, number>();
  /**
   * Queues claimed (leased) while their endpoint had all it may have in flight, per endpoint in
   * claim order: started as that endpoint's attempts finish, with no store round trip. Putting them
   * back on the schedule 50 ms later instead (as this did) made a busy endpoint's backlog go round
   * and round: hundreds of schedule writes per finished attempt, and deliveries/s in the tens.
   * Held queues do not count against `maxInFlight`, so a slow endpoint's backlog never keeps other
   * endpoints' queues from being claimed.
   */
  private readonly held = new Map<string, Held[]>();
  private heldCount = 0;
  private running: Promise<void> | null = null;
  private stopped = true;
  private wakeUp: (() => void) | null = null;
  private readonly attempts = new Set<Promise<void>>();
  private readonly quietLog: LineLog;

  private readonly options: DispatcherOptions;
  constructor(options: DispatcherOptions) {
    this.options = options;
    this.kv = options.kv;
    this.clock = options.clock ?? Date.now;
    this.schedule = options.retrySchedule ?? DEFAULT_RETRY_SCHEDULE_SECONDS;
    this.leaseMs = options.leaseMs ?? 30_000;
    this.maxInFlight = options.maxInFlight ?? 256;
    this.perEndpoint = options.perEndpoint ?? 16;
    this.idleMs = options.idleMs ?? 200;
    this.quietLog = withoutRepeats((level, message) => options.log?.(level, message));
  }

  /**
   * Queues events for their endpoints (durably; the caller may then acknowledge them). Every
   * endpoint of the key that subscribes to the type gets it, disabled ones too (kept for 7 days).
   * An event already queued, or older than what an endpoint already had, is not queued again.
   */
  async enqueue(events: readonly WebhookEvent[]): Promise<void> {
    for (const event of events) await this.enqueueOne(event);
    this.wake();
  }

  /**
   * One event: its document and every endpoint queue's change in one step (one round trip with
   * Redis; the endpoint list is one read at most a second old), then the queues it made non-empty
   * go on the schedule (the index entry and the event are in before a queue can be claimed).
   */
  private async enqueueOne(event: WebhookEvent): Promise<void> {
    const prefix = event.key_prefix;
    const found = event.target_endpoint
      ? [await this.options.endpoints.get(prefix, event.target_endpoint)]
      : await this.options.endpoints.listRecent(prefix);
    const endpoints = found
      .filter((e): e is EndpointDoc => e !== null)
      .filter((e) => event.target_endpoint !== undefined || (subscribes(e, event.type) && event.type !== 'webhook.test'));
    const shipment = shipmentKeyOf(event);
    const queueKeys = endpoints.map((endpoint) => pushKeys.queue(prefix, endpoint.id, shipment));
    const now = this.clock();
    const entry = { id: event.id, seq: event.sequence, forced: event.forced === true, created_ms: Date.parse(event.created_at) };
    const madeNonEmpty = await this.kv.transact(queueKeys, (queues) => {
      const writes: { key: string; value: unknown; ttlMs?: number }[] = [{ key: pushKeys.event(prefix, event.id), value: event, ttlMs: EVENT_RETENTION_MS }];
      const setAdds: { key: string; member: string }[] = [];
      const emptied = endpoints.map((endpoint, i) => {
        const q = (queues[i] as QueueDoc | null) ?? { pending: [], last_done_seq: 0, attempt: 0, next_ms: now };
        if (q.pending.some((p) => p.id === event.id)) return false;
        if (!event.forced && event.sequence <= q.last_done_seq) return false;
        const pending = [...q.pending, entry].sort((x, y) => x.seq - y.seq);
        const empty = q.pending.length === 0;
        writes.push({ key: queueKeys[i]!, value: { ...q, pending, ...(empty ? { attempt: 0, next_ms: now } : {}) } satisfies QueueDoc });
        setAdds.push({ key: pushKeys.queueIndex(prefix, endpoint.id), member: shipment });
        return empty;
      });
      return { writes, setAdds, result: emptied };
    });
    // A queue that had events is already scheduled (or waits for its endpoint to be enabled).
    await Promise.all(endpoints.map(async (endpoint, i) => {
      if (!madeNonEmpty[i]) return;
      // The list may be a second old: a disabled endpoint is read again, after the queue was
      // written, so an enable in between (which schedules the queues it finds) is never missed.
      const enabled = endpoint.status === 'enabled' || (await this.options.endpoints.get(prefix, endpoint.id))?.status === 'enabled';
      if (enabled) await this.kv.schedule(pushKeys.due(), dueMember(prefix, endpoint.id, shipment), now);
    }));
  }

  /** Enables an endpoint and schedules its kept events (those younger than 7 days), in order. */
  async enableEndpoint(prefix: string, endpointId: string): Promise<EndpointDoc | null> {
    const endpoint = await this.options.endpoints.enable(prefix, endpointId);
    if (!endpoint) return null;
    const now = this.clock();
    for (const shipment of await this.kv.setMembers(pushKeys.queueIndex(prefix, endpointId))) {
      const left = await this.kv.update<QueueDoc, number>(pushKeys.queue(prefix, endpointId, shipment), (queue) => {
        if (!queue) return { result: 0 };
        const pending = queue.pending.filter((p) => p.created_ms > now - DISABLED_KEEP_MS);
        return { next: { ...queue, pending, attempt: 0, next_ms: now }, result: pending.length };
      });
      if (left > 0) await this.kv.schedule(pushKeys.due(), dueMember(prefix, endpointId, shipment), now);
    }
    this.wake();
    return endpoint;
  }

  /**
   * A key is active again (resumed or renewed): the queues held while it was not go back on the
   * schedule, due now, in order (each queue keeps its sequence order).
   */
  async resumeKey(prefix: string): Promise<number> {
    const now = this.clock();
    let scheduled = 0;
    for (const endpoint of await this.options.endpoints.list(prefix)) {
      if (endpoint.status !== 'enabled') continue;
      for (const shipment of await this.kv.setMembers(pushKeys.queueIndex(prefix, endpoint.id))) {
        const queue = await this.kv.get<QueueDoc>(pushKeys.queue(prefix, endpoint.id, shipment));
        if (!queue || queue.pending.length === 0) continue;
        await this.kv.schedule(pushKeys.due(), dueMember(prefix, endpoint.id, shipment), Math.max(now, queue.next_ms));
        scheduled++;
      }
    }
    this.wake();
    return scheduled;
  }

  /** A key was revoked: its queued events go, with its queues (a claimed one is dropped at its attempt). */
  async dropKey(prefix: string, endpointIds: readonly string[]): Promise<void> {
    for (const endpointId of endpointIds) {
      const index = pushKeys.queueIndex(prefix, endpointId);
      for (const shipment of await this.kv.setMembers(index)) {
        await this.kv.delete(pushKeys.queue(prefix, endpointId, shipment));
        await this.kv.unschedule(pushKeys.due(), dueMember(prefix, endpointId, shipment));
        await this.kv.setRemove(index, shipment);
      }
    }
  }

  /** Queues a stored event again for one endpoint (resend). False when the event is no longer kept. */
  async resend(prefix: string, endpointId: string, eventId: string): Promise<WebhookEvent | null> {
    const event = await this.kv.get<WebhookEvent>(pushKeys.event(prefix, eventId));
    return event ? { ...event, target_endpoint: endpointId, forced: true } : null;
  }

  async attemptsOf(prefix: string, endpointId: string, count = ATTEMPTS_KEPT): Promise<AttemptView[]> {
    const attempts = await this.kv.listRange<AttemptView>(pushKeys.attempts(prefix, endpointId), count);
    // Attempts recorded before they named their shipment (2026-11-28) answer null there.
    return attempts.map((a) => ({ ...a, carrier: a.carrier ?? null, awb: a.awb ?? null }));
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.running = this.loop();
  }

  /** Stops claiming, waits for the attempts in flight, and gives back the queues it held. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake();
    await this.running;
    await Promise.all([...this.attempts]);
    await this.releaseHeld(() => true);
  }

  wake(): void {
    this.wakeUp?.();
  }

  private async loop(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      let claimed = 0;
      try {
        if (this.kv.available()) {
          await this.releaseHeld((h) => this.tooLateToStart(h.leaseUntil));
          claimed = await this.claimAndStart();
        }
        failures = 0;
      } catch (err) {
        // The state store is away: say so once per 10 s, and ask again less and less often (≤ 5 s).
        failures++;
        this.quietLog('warn', `webhook dispatcher: claiming due deliveries failed: ${(err as Error).message}`);
      }
      if (claimed === 0 || this.room() <= 0) {
        const waitMs = failures ? Math.min(5_000, this.idleMs * 2 ** failures) : this.idleMs;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, waitMs);
          this.wakeUp = () => { clearTimeout(timer); resolve(); };
        });
        this.wakeUp = null;
      }
    }
  }

  /** Attempts this process may still start. */
  private room(): number {
    return this.maxInFlight - this.inFlight;
  }

  /**
   * Claims due queues up to the free capacity and starts their attempts without waiting for them;
   * a queue whose endpoint is at its limit is held until one of that endpoint's attempts ends (or,
   * the hold being full, goes back on the schedule a moment later). Answers how many were started
   * or held: claims that only put queues back are no progress, and the loop waits after them.
   */
  private async claimAndStart(): Promise<number> {
    const room = this.room();
    if (room <= 0) return 0;
    const claimedMs = this.clock();
    const leaseUntil = claimedMs + this.leaseMs;
    const members = await this.kv.claimDue(pushKeys.due(), claimedMs, this.leaseMs, room);
    let taken = 0;
    for (const member of members) {
      const parsed = parseDueMember(member);
      if (!parsed) {
        await this.kv.unschedule(pushKeys.due(), member);
        continue;
      }
      if ((this.inFlightPerEndpoint.get(parsed.endpointId) ?? 0) < this.perEndpoint) {
        this.startAttempt(member, parsed.prefix, parsed.endpointId, parsed.shipment, leaseUntil);
        taken++;
        continue;
      }
      const waiting = this.held.get(parsed.endpointId) ?? [];
      if (waiting.length >= HELD_PER_ENDPOINT || this.heldCount >= HELD_IN_ALL) {
        await this.kv.schedule(pushKeys.due(), member, this.clock() + DEFER_MS);
        continue;
      }
      waiting.push({ member, prefix: parsed.prefix, shipment: parsed.shipment, claimedMs, leaseUntil });
      this.held.set(parsed.endpointId, waiting);
      this.heldCount++;
      taken++;
    }
    return taken;
  }

  private startAttempt(member: string, prefix: string, endpointId: string, shipment: string, leaseUntil: number): void {
    this.inFlight++;
    this.inFlightPerEndpoint.set(endpointId, (this.inFlightPerEndpoint.get(endpointId) ?? 0) + 1);
    const attempt = this.process(member, prefix, endpointId, shipment, leaseUntil)
      .catch((err: unknown) => this.options.log?.('error', `webhook delivery ${member} failed: ${(err as Error).message}`))
      .finally(() => {
        this.inFlight--;
        const left = (this.inFlightPerEndpoint.get(endpointId) ?? 1) - 1;
        if (left > 0) this.inFlightPerEndpoint.set(endpointId, left);
        else this.inFlightPerEndpoint.delete(endpointId);
        this.attempts.delete(attempt);
        const next = this.stopped ? undefined : this.nextHeld(endpointId);
        if (next) {
          // The endpoint's next held queue takes the place: room is unchanged, no claim needed.
          this.startAttempt(next.member, next.prefix, endpointId, next.shipment, next.leaseUntil);
        } else if (this.room() >= CLAIM_BATCH || this.inFlight === 0) {
          // Claiming costs a store round trip (embedded: a pass over the schedule): once a batch
          // of room is free, not after every attempt (the loop's idle timer and new work wake it too).
          this.wake();
        }
      });
    this.attempts.add(attempt);
  }

  private tooLateToStart(leaseUntil: number): boolean {
    return leaseUntil - this.clock() < ATTEMPT_LEASE_MS;
  }

  /** The endpoint's oldest held queue that still has lease enough to start; older ones go back on the schedule. */
  private nextHeld(endpointId: string): Held | undefined {
    const waiting = this.held.get(endpointId);
    let next: Held | undefined;
    while (waiting?.length && !next) {
      const h = waiting.shift()!;
      this.heldCount--;
      if (!this.tooLateToStart(h.leaseUntil)) next = h;
      else this.kv.schedule(pushKeys.due(), h.member, this.clock()).catch(() => undefined); // the lease ends soon anyway
    }
    if (waiting?.length === 0) this.held.delete(endpointId);
    return next;
  }

  /**
   * Puts held queues back on the schedule, due now: at stop, and once too little of their lease
   * is left for an attempt (the lease is what keeps other dispatchers off them; one started that
   * late could outlive it and be taken twice).
   */
  private async releaseHeld(which: (h: Held) => boolean): Promise<void> {
    for (const [endpointId, waiting] of this.held) {
      // Held in claim order: when the first is kept, all are (the loop runs this at every pass).
      if (!which(waiting[0]!)) continue;
      const keep = waiting.filter((h) => !which(h));
      if (keep.length === waiting.length) continue;
      const released = waiting.filter((h) => which(h));
      if (keep.length) this.held.set(endpointId, keep);
      else this.held.delete(endpointId);
      this.heldCount -= released.length;
      const now = this.clock();
      for (const h of released) await this.kv.schedule(pushKeys.due(), h.member, now);
    }
  }

  /** Due work now, for tests: claims and completes every due attempt (repeats until none is due). */
  async drain(): Promise<void> {
    for (;;) {
      const claimed = await this.claimAndStart();
      // Held queues start as attempts end: wait until none is left in flight.
      while (this.attempts.size > 0) await Promise.all([...this.attempts]);
      if (claimed === 0 && this.heldCount === 0) return;
    }
  }

  /**
   * One attempt at the queue's head. Round trips with Redis: the endpoint and the queue (together),
   * the event, then after the send one step for the queue, the endpoint's health and the attempt
   * log, and one for the schedule.
   */
  private async process(member: string, prefix: string, endpointId: string, shipment: string, leaseUntil: number): Promise<void> {
    const { kv } = this;
    const due = pushKeys.due();
    const queueKey = pushKeys.queue(prefix, endpointId, shipment);
    const endpointKey = pushKeys.endpoint(prefix, endpointId);
    const [endpoint, queue] = await Promise.all([this.options.endpoints.get(prefix, endpointId), kv.get<QueueDoc>(queueKey)]);
    if (!endpoint) {
      // The endpoint was deleted: its queues go with it.
      await kv.delete(queueKey);
      await kv.unschedule(due, member);
      return;
    }
    if (!queue || queue.pending.length === 0 || endpoint.status === 'disabled') {
      await this.unscheduleUnlessRescheduled(member, leaseUntil);
      return;
    }
    if (queue.next_ms > this.clock()) {
      await kv.schedule(due, member, queue.next_ms);
      return;
    }
    const head = queue.pending[0]!;
    const event = await kv.get<WebhookEvent>(pushKeys.event(prefix, head.id));
    if (!event) {
      // Kept 8 days; an event older than that is dropped rather than block the queue.
      const after = await kv.transact([queueKey], ([current]) => {
        const step = this.headStep(current as QueueDoc | null, head, 'done', this.clock());
        return { writes: step.write ? [{ key: queueKey, value: step.queue }] : [], result: step.queue };
      });
      await this.scheduleNext(member, leaseUntil, after, endpoint.status === 'enabled');
      return;
    }

    // The last step before the send: a revoke, suspend or expiry answered before this read stops
    // the attempt. Held (not active): off the schedule until resumeKey. Gone: the queue is dropped.
    const standing = await this.options.standing(prefix, this.clock());
    if (standing !== 'active') {
      if (isGone(standing)) {
        await kv.delete(queueKey);
        await kv.unschedule(due, member);
      } else {
        await this.unscheduleUnlessRescheduled(member, leaseUntil);
      }
      return;
    }

    const startedMs = this.clock();
    // The signature's timestamp is the wall clock whatever clock drives the rules: receivers
    // compare it with their own to refuse replays (Standard Webhooks allows 5 minutes).
    const headers = signatureHeaders({
      id: event.id, timestampSeconds: Math.floor(Date.now() / 1000), body: event.body, secrets: signingSecrets(endpoint, startedMs),
    });
    // Retry delays count the head's failed attempts; an attempt's number counts those begun (below).
    const failures = queue.attempt + 1;
    const rowOf = (attempt: number, result: Pick<DeliveryRow, 'status_code' | 'latency_ms' | 'error'>): DeliveryRow => ({
      event_id: event.id, endpoint_id: endpointId, key_prefix: prefix, type: event.type, carrier: event.carrier ?? '', awb: event.awb ?? '',
      attempt, attempted_at: new Date(startedMs).toISOString(), ...result,
    });
    const { attempt, rowMember } = this.options.rows
      ? await this.beginAttempt(this.options.rows, queueKey, head.id, (n) => rowOf(n, { status_code: null, latency_ms: 0, error: null }))
      : { attempt: failures, rowMember: null };
    const outcome = await this.options.sender.send({ endpointId, url: endpoint.url, mode: endpoint.mode, headers, body: event.body });
    const now = this.clock();
    const row = rowOf(attempt, { status_code: outcome.statusCode, latency_ms: Math.round(outcome.latencyMs), error: outcome.error });
    const ok = isOk(outcome.statusCode);
    const gone = outcome.statusCode === 410;
    // Computed once: `transact` may run its step again, and the jitter must not change under it.
    const delay = ok || gone ? null : retryDelayMs(failures, this.schedule, outcome.retryAfterSeconds);
    const nextAttemptMs = delay === null ? null : now + delay;
    const headAction: HeadAction = ok || (!gone && nextAttemptMs === null) ? 'done' : { attempt: failures, nextMs: gone ? now : nextAttemptMs! };

    // The queue's step, the endpoint's health and the attempt log: one atomic step of this key's documents.
    const attemptsKey = pushKeys.attempts(prefix, endpointId);
    const { queueAfter, disabled, endpointAfter } = await kv.transact([queueKey, endpointKey], ([currentQueue, currentEndpoint]) => {
      const step = this.headStep(currentQueue as QueueDoc | null, head, headAction, now);
      const health = currentEndpoint ? healthAfter(currentEndpoint as EndpointDoc, { ok, gone }, now, FAILING_LIMIT_MS) : { disabled: null };
      const attemptView: AttemptView = {
        event_id: event.id, type: event.type, carrier: event.carrier ?? null, awb: event.awb ?? null, attempt, status_code: outcome.statusCode,
        latency_ms: row.latency_ms, error: keyVisibleError(outcome), attempted_at: row.attempted_at,
        next_attempt_at: nextAttemptMs !== null && !health.disabled ? new Date(nextAttemptMs).toISOString() : null,
      };
      const writes: { key: string; value: unknown }[] = [];
      if (step.write) writes.push({ key: queueKey, value: step.queue });
      if (health.next) writes.push({ key: endpointKey, value: health.next });
      if (this.options.rows && rowMember) writes.push(this.options.rows.outcome(rowMember, row));
      return {
        writes, listPushes: [{ key: attemptsKey, value: attemptView, keep: ATTEMPTS_KEPT }],
        result: { queueAfter: step.queue, disabled: health.disabled, endpointAfter: (health.next ?? currentEndpoint) as EndpointDoc | null },
      };
    });
    this.options.onAttempt?.(row, rowMember);
    if (disabled) {
      this.options.endpoints.changed(prefix);
      this.options.log?.('warn', `webhook endpoint ${endpointId} of ${prefix} disabled (${disabled})`);
      await this.options.onDisabled?.({ ...endpoint, status: 'disabled', disabled_reason: disabled }, disabled).catch((err: unknown) => {
        this.options.log?.('error', `could not tell ${prefix} that endpoint ${endpointId} was disabled: ${(err as Error).message}`);
      });
    }
    await this.scheduleNext(member, leaseUntil, queueAfter, endpointAfter?.status === 'enabled');
  }

  /**
   * Before the send, with durable attempt rows: the head's attempt number (one past those begun,
   * so an attempt a kill cut short keeps its own number and row) and its row as "interrupted", in
   * one step, then the row's reconciliation scheduled.
   */
  private async beginAttempt(
    rows: AttemptRowOutbox, queueKey: string, headId: string, draft: (attempt: number) => DeliveryRow,
  ): Promise<{ attempt: number; rowMember: string }> {
    const begun = await this.kv.transact([queueKey], ([current]) => {
      const queue = current as QueueDoc | null;
      const attempt = Math.max(queue?.begun ?? 0, queue?.attempt ?? 0) + 1;
      const row = rows.prepare(draft(attempt));
      const writes: { key: string; value: unknown; ttlMs?: number }[] = [row.write];
      if (queue && queue.pending[0]?.id === headId) writes.push({ key: queueKey, value: { ...queue, begun: attempt } });
      return { writes, result: { attempt, rowMember: row.member } };
    });
    await rows.watch(begun.rowMember);
    return begun;
  }

  /**
   * The queue after its head `head` was delivered or given up ('done': the next event becomes the
   * head, tried at once) or failed (tried again at `nextMs`). A head that already moved (another
   * dispatcher after our lease ended) leaves the queue as it is.
   */
  private headStep(queue: QueueDoc | null, head: { id: string; seq: number }, action: HeadAction, now: number): { queue: QueueDoc | null; write: boolean } {
    if (!queue || queue.pending[0]?.id !== head.id) return { queue, write: false };
    if (action === 'done') {
      return { queue: { pending: queue.pending.slice(1), last_done_seq: Math.max(queue.last_done_seq, head.seq), attempt: 0, next_ms: now }, write: true };
    }
    return { queue: { ...queue, attempt: action.attempt, next_ms: action.nextMs }, write: true };
  }

  /**
   * Puts the queue back on the schedule for its next attempt, or takes it off. `queue` and
   * `enabled` are as the step that just changed the queue read them: an enqueue since then found
   * it non-empty and left the scheduling to us, or found it empty and scheduled it itself.
   */
  private async scheduleNext(member: string, leaseUntil: number, queue: QueueDoc | null, enabled: boolean): Promise<void> {
    if (queue && queue.pending.length > 0 && enabled) await this.kv.schedule(pushKeys.due(), member, queue.next_ms);
    else await this.unscheduleUnlessRescheduled(member, leaseUntil);
  }

  /**
   * Takes the queue off the schedule unless someone scheduled it since our claim (its due time is
   * no longer our lease's end): an enqueue that found it empty, or an enable. Either did so after
   * changing what made us take it off, so no event is stranded.
   */
  private async unscheduleUnlessRescheduled(member: string, leaseUntil: number): Promise<void> {
    await this.kv.unscheduleIf(pushKeys.due(), member, leaseUntil);
  }
}

type HeadAction = 'done' | { attempt: number; nextMs: number };
