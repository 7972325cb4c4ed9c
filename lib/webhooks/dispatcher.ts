import { withoutRepeats, type LineLog } from '../logging/index.ts';
import type { EndpointDoc, EndpointStore, DisabledReason } from './endpoints.ts';
import { signingSecrets, subscribes } from './endpoints.ts';
import { shipmentKeyOf, type WebhookEvent } from './events.ts';
import type { PushKv } from './kv.ts';
import { dueMember, parseDueMember, pushKeys } from './keys.ts';
import { DEFAULT_RETRY_SCHEDULE_SECONDS, retryDelayMs } from './retry.ts';
import type { DeliveryOutcome, DeliveryRequest } from './sender.ts';
import { signatureHeaders } from './signing.ts';

const DAY_MS = 86_400_000;
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
  /** When the head may be tried. */
  next_ms: number;
}

/** An attempt as `GET /v1/webhooks/{id}/deliveries` shows it. */
export interface AttemptView {
  event_id: string;
  type: string;
  attempt: number;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  attempted_at: string;
  /** Null when delivered, given up, or waiting for the endpoint to be enabled. */
  next_attempt_at: string | null;
}

/** A row of ClickHouse `webhook_deliveries` (contracts.md). */
export interface DeliveryRow {
  event_id: string;
  endpoint_id: string;
  key_prefix: string;
  type: string;
  carrier: string;
  awb: string;
  attempt: number;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  attempted_at: string;
}

export interface DeliverySender {
  send(request: DeliveryRequest): Promise<DeliveryOutcome>;
}

export interface DispatcherOptions {
  kv: PushKv;
  endpoints: EndpointStore;
  sender: DeliverySender;
  clock?: () => number;
  /** Seconds after each failed attempt (WEBHOOK_RETRY_SCHEDULE). */
  retrySchedule?: readonly number[];
  /** Every attempt (ClickHouse webhook_deliveries in distributed mode). */
  onAttempt?: (row: DeliveryRow) => void;
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
  private readonly kv: PushKv;
  private readonly clock: () => number;
  private readonly schedule: readonly number[];
  private readonly leaseMs: number;
  private readonly maxInFlight: number;
  private readonly perEndpoint: number;
  private readonly idleMs: number;
  private inFlight = 0;
  private readonly inFlightPerEndpoint = new Map<string, number>();
  private running: Promise<void> | null = null;
  private stopped = true;
  private wakeUp: (() => void) | null = null;
  private readonly attempts = new Set<Promise<void>>();
  private readonly quietLog: LineLog;

  constructor(private readonly options: DispatcherOptions) {
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
    for (const event of events) {
      await this.kv.set(pushKeys.event(event.key_prefix, event.id), event, EVENT_RETENTION_MS);
      const endpoints = event.target_endpoint
        ? [await this.options.endpoints.get(event.key_prefix, event.target_endpoint)].filter((e): e is EndpointDoc => e !== null)
        : (await this.options.endpoints.list(event.key_prefix)).filter((e) => subscribes(e, event.type) && event.type !== 'webhook.test');
      const shipment = shipmentKeyOf(event);
      for (const endpoint of endpoints) {
        const now = this.clock();
        const wasEmpty = await this.kv.update<QueueDoc, boolean | null>(pushKeys.queue(event.key_prefix, endpoint.id, shipment), (queue) => {
          const q: QueueDoc = queue ?? { pending: [], last_done_seq: 0, attempt: 0, next_ms: now };
          if (q.pending.some((p) => p.id === event.id)) return { result: null };
          if (!event.forced && event.sequence <= q.last_done_seq) return { result: null };
          const pending = [...q.pending, { id: event.id, seq: event.sequence, forced: event.forced === true, created_ms: Date.parse(event.created_at) }]
            .sort((a, b) => a.seq - b.seq);
          const empty = q.pending.length === 0;
          return { next: { ...q, pending, ...(empty ? { attempt: 0, next_ms: now } : {}) }, result: empty };
        });
        if (wasEmpty === null) continue;
        await this.kv.setAdd(pushKeys.queueIndex(event.key_prefix, endpoint.id), shipment);
        // A queue that had events is already scheduled (or waits for its endpoint to be enabled).
        if (wasEmpty && endpoint.status === 'enabled') await this.kv.schedule(pushKeys.due(), dueMember(event.key_prefix, endpoint.id, shipment), now);
      }
    }
    this.wake();
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

  /** Queues a stored event again for one endpoint (resend). False when the event is no longer kept. */
  async resend(prefix: string, endpointId: string, eventId: string): Promise<WebhookEvent | null> {
    const event = await this.kv.get<WebhookEvent>(pushKeys.event(prefix, eventId));
    return event ? { ...event, target_endpoint: endpointId, forced: true } : null;
  }

  async attemptsOf(prefix: string, endpointId: string, count = ATTEMPTS_KEPT): Promise<AttemptView[]> {
    return this.kv.listRange<AttemptView>(pushKeys.attempts(prefix, endpointId), count);
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.running = this.loop();
  }

  /** Stops claiming, and waits for the attempts in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake();
    await this.running;
    await Promise.all([...this.attempts]);
  }

  wake(): void {
    this.wakeUp?.();
  }

  private async loop(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      let claimed = 0;
      try {
        claimed = this.kv.available() ? await this.claimAndStart() : 0;
        failures = 0;
      } catch (err) {
        // The state store is away: say so once per 10 s, and ask again less and less often (≤ 5 s).
        failures++;
        this.quietLog('warn', `webhook dispatcher: claiming due deliveries failed: ${(err as Error).message}`);
      }
      if (claimed === 0 || this.inFlight >= this.maxInFlight) {
        const waitMs = failures ? Math.min(5_000, this.idleMs * 2 ** failures) : this.idleMs;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, waitMs);
          this.wakeUp = () => { clearTimeout(timer); resolve(); };
        });
        this.wakeUp = null;
      }
    }
  }

  /** Claims due queues up to the free capacity and starts their attempts without waiting for them. */
  private async claimAndStart(): Promise<number> {
    const room = this.maxInFlight - this.inFlight;
    if (room <= 0) return 0;
    const members = await this.kv.claimDue(pushKeys.due(), this.clock(), this.leaseMs, room);
    for (const member of members) {
      const parsed = parseDueMember(member);
      if (!parsed) {
        await this.kv.unschedule(pushKeys.due(), member);
        continue;
      }
      const busy = this.inFlightPerEndpoint.get(parsed.endpointId) ?? 0;
      if (busy >= this.perEndpoint) {
        // This endpoint has all it may have in flight; its queue waits a moment, others go on.
        await this.kv.schedule(pushKeys.due(), member, this.clock() + 50);
        continue;
      }
      this.inFlight++;
      this.inFlightPerEndpoint.set(parsed.endpointId, busy + 1);
      const attempt = this.process(member, parsed.prefix, parsed.endpointId, parsed.shipment)
        .catch((err: unknown) => this.options.log?.('error', `webhook delivery ${member} failed: ${(err as Error).message}`))
        .finally(() => {
          this.inFlight--;
          this.inFlightPerEndpoint.set(parsed.endpointId, (this.inFlightPerEndpoint.get(parsed.endpointId) ?? 1) - 1);
          this.attempts.delete(attempt);
          this.wake();
        });
      this.attempts.add(attempt);
    }
    return members.length;
  }

  /** Due work now, for tests: claims and completes every due attempt (repeats until none is due). */
  async drain(): Promise<void> {
    for (;;) {
      const claimed = await this.claimAndStart();
      await Promise.all([...this.attempts]);
      if (claimed === 0) return;
    }
  }

  private async process(member: string, prefix: string, endpointId: string, shipment: string): Promise<void> {
    const { kv } = this;
    const due = pushKeys.due();
    const queueKey = pushKeys.queue(prefix, endpointId, shipment);
    const [endpoint, queue] = await Promise.all([this.options.endpoints.get(prefix, endpointId), kv.get<QueueDoc>(queueKey)]);
    if (!endpoint) {
      // The endpoint was deleted: its queues go with it.
      await kv.delete(queueKey);
      await kv.unschedule(due, member);
      return;
    }
    if (!queue || queue.pending.length === 0 || endpoint.status === 'disabled') {
      await this.unscheduleUnlessRefilled(member, queueKey, endpoint);
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
      await this.finishHead(queueKey, head.id, head.seq);
      await this.scheduleNext(member, queueKey, endpoint);
      return;
    }

    const startedMs = this.clock();
    // The signature's timestamp is the wall clock whatever clock drives the rules: receivers
    // compare it with their own to refuse replays (Standard Webhooks allows 5 minutes).
    const headers = signatureHeaders({ id: event.id, timestampSeconds: Math.floor(Date.now() / 1000), body: event.body, secrets: signingSecrets(endpoint, startedMs) });
    const outcome = await this.options.sender.send({ endpointId, url: endpoint.url, mode: endpoint.mode, headers, body: event.body });
    const now = this.clock();
    const attempt = queue.attempt + 1;
    const ok = isOk(outcome.statusCode);
    const gone = outcome.statusCode === 410;
    let nextAttemptMs: number | null = null;
    if (ok) {
      await this.finishHead(queueKey, head.id, head.seq);
    } else if (gone) {
      await this.failHead(queueKey, head.id, attempt, now);
    } else {
      const delay = retryDelayMs(attempt, this.schedule, outcome.retryAfterSeconds);
      if (delay === null) await this.finishHead(queueKey, head.id, head.seq);
      else {
        nextAttemptMs = now + delay;
        await this.failHead(queueKey, head.id, attempt, nextAttemptMs);
      }
    }

    const disabled = await this.options.endpoints.recordOutcome(prefix, endpointId, { ok, gone }, now, FAILING_LIMIT_MS);
    const view: AttemptView = {
      event_id: event.id, type: event.type, attempt, status_code: outcome.statusCode, latency_ms: Math.round(outcome.latencyMs),
      error: outcome.error, attempted_at: new Date(startedMs).toISOString(),
      next_attempt_at: nextAttemptMs !== null && !disabled ? new Date(nextAttemptMs).toISOString() : null,
    };
    await kv.listPush(pushKeys.attempts(prefix, endpointId), view, ATTEMPTS_KEPT);
    this.options.onAttempt?.({
      event_id: event.id, endpoint_id: endpointId, key_prefix: prefix, type: event.type, carrier: event.carrier ?? '', awb: event.awb ?? '',
      attempt, status_code: outcome.statusCode, latency_ms: view.latency_ms, error: outcome.error, attempted_at: view.attempted_at,
    });
    if (disabled) {
      this.options.log?.('warn', `webhook endpoint ${endpointId} of ${prefix} disabled (${disabled})`);
      await this.options.onDisabled?.({ ...endpoint, status: 'disabled', disabled_reason: disabled }, disabled).catch((err: unknown) => {
        this.options.log?.('error', `could not tell ${prefix} that endpoint ${endpointId} was disabled: ${(err as Error).message}`);
      });
    }
    await this.scheduleNext(member, queueKey, disabled ? { ...endpoint, status: 'disabled' } : endpoint);
  }

  /** The head was delivered or given up: the next event becomes the head, tried at once. */
  private finishHead(queueKey: string, id: string, seq: number): Promise<void> {
    const now = this.clock();
    return this.kv.update<QueueDoc, void>(queueKey, (queue) => {
      if (!queue || queue.pending[0]?.id !== id) return { result: undefined };
      return { next: { pending: queue.pending.slice(1), last_done_seq: Math.max(queue.last_done_seq, seq), attempt: 0, next_ms: now }, result: undefined };
    });
  }

  private failHead(queueKey: string, id: string, attempt: number, nextMs: number): Promise<void> {
    return this.kv.update<QueueDoc, void>(queueKey, (queue) => {
      if (!queue || queue.pending[0]?.id !== id) return { result: undefined };
      return { next: { ...queue, attempt, next_ms: nextMs }, result: undefined };
    });
  }

  private async scheduleNext(member: string, queueKey: string, endpoint: EndpointDoc): Promise<void> {
    const queue = await this.kv.get<QueueDoc>(queueKey);
    if (queue && queue.pending.length > 0 && endpoint.status === 'enabled') await this.kv.schedule(pushKeys.due(), member, queue.next_ms);
    else await this.unscheduleUnlessRefilled(member, queueKey, endpoint);
  }

  /**
   * Takes the queue off the schedule, then looks again: an enqueue that found it empty meanwhile
   * scheduled it before (kept) or after (then this puts it back), so no event is stranded.
   */
  private async unscheduleUnlessRefilled(member: string, queueKey: string, endpoint: EndpointDoc): Promise<void> {
    await this.kv.unschedule(pushKeys.due(), member);
    // Both read again: an enable may have scheduled the queue between our reads and the unschedule.
    const [queue, current] = await Promise.all([this.kv.get<QueueDoc>(queueKey), this.options.endpoints.get(endpoint.key_prefix, endpoint.id)]);
    if (queue && queue.pending.length > 0 && current?.status === 'enabled') await this.kv.schedule(pushKeys.due(), member, queue.next_ms);
  }
}
