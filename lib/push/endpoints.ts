import { randomBytes } from 'node:crypto';
import { SUBSCRIBABLE_EVENT_TYPES, WEBHOOK_EVENT_TYPES, type SubscribableEventType } from './events.ts';
import type { Kv } from '../kv/index.ts';
import { pushKeys } from './keys.ts';
import { generateSecret } from './signing.ts';
import { NO_PRIVATE_TARGETS, resolveEndpointHost, systemLookup, type AllowedTargets, type Lookup } from './url-policy.ts';
import { DAY_MS } from '../time/index.ts';
import type { KeyMode } from '../schemas/index.ts';

/** At most this many endpoints per API key (contracts.md). */
export const MAX_ENDPOINTS_PER_KEY = 10;
/** After a rotation the old secret keeps signing this long, so receivers can switch without a gap. */
export const ROTATION_OVERLAP_MS = DAY_MS;
export const MAX_DESCRIPTION_LENGTH = 256;

export type DisabledReason = 'gone' | 'failing';

export interface EndpointDoc {
  id: string;
  key_prefix: string;
  mode: KeyMode;
  url: string;
  /** Null: every event type (tracking and analyzer). */
  events: SubscribableEventType[] | null;
  description: string | null;
  status: 'enabled' | 'disabled';
  disabled_reason: DisabledReason | null;
  disabled_at_ms: number | null;
  /** Newest first; a rotated-out secret carries the end of its overlap. */
  secrets: { secret: string; until_ms: number | null }[];
  created_at_ms: number;
  /** Since when every attempt failed (null after a success): 3 days of it disables the endpoint. */
  failing_since_ms: number | null;
}

/** What the API shows of an endpoint (never its secrets). */
export interface EndpointView {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  status: 'enabled' | 'disabled';
  disabled_reason: DisabledReason | null;
  created_at: string;
}

export function endpointView(doc: EndpointDoc): EndpointView {
  return {
    id: doc.id, url: doc.url, events: doc.events ?? [...SUBSCRIBABLE_EVENT_TYPES], description: doc.description,
    status: doc.status, disabled_reason: doc.disabled_reason, created_at: new Date(doc.created_at_ms).toISOString(),
  };
}

/** The secrets that sign now: the current one and any still in its rotation overlap. */
export function signingSecrets(doc: EndpointDoc, nowMs: number): string[] {
  return doc.secrets.filter((s) => s.until_ms === null || s.until_ms > nowMs).map((s) => s.secret);
}

export function subscribes(doc: EndpointDoc, type: string): boolean {
  return doc.events === null || (doc.events as string[]).includes(type);
}

/** A refusal the API answers 400 (bad_request / invalid_url) or 409 (too many endpoints). */
export class EndpointError extends Error {
  readonly reason: 'invalid_url' | 'invalid_events' | 'invalid_description' | 'too_many_endpoints';
  constructor(reason: 'invalid_url' | 'invalid_events' | 'invalid_description' | 'too_many_endpoints', message: string) {
    super(message);
    this.reason = reason;
  }
}

export interface NewEndpoint {
  url: unknown;
  events?: unknown;
  description?: unknown;
}

/**
 * How long the dispatcher's intake may use a key's endpoint list read before (a read costs two
 * round trips per event with Redis). Changes made through the same EndpointStore are seen at once;
 * an endpoint created in another process gets events queued from at most this long later.
 */
export const ENDPOINT_LIST_CACHE_MS = 1_000;

/**
 * An endpoint's health after an attempt: a success ends a failure streak; a failure starts one or,
 * after `failingLimitMs` of nothing but failures (or at a 410), disables the endpoint. `next` is
 * the document to write (undefined: unchanged); `disabled` says whether this outcome disabled it.
 */
export function healthAfter(
  doc: EndpointDoc, outcome: { ok: boolean; gone: boolean }, nowMs: number, failingLimitMs: number,
): { next?: EndpointDoc; disabled: DisabledReason | null } {
  if (outcome.ok) return doc.failing_since_ms === null ? { disabled: null } : { next: { ...doc, failing_since_ms: null }, disabled: null };
  const since = doc.failing_since_ms ?? nowMs;
  const reason: DisabledReason | null = outcome.gone ? 'gone' : nowMs - since >= failingLimitMs ? 'failing' : null;
  if (reason && doc.status === 'enabled') {
    return { next: { ...doc, failing_since_ms: since, status: 'disabled', disabled_reason: reason, disabled_at_ms: nowMs }, disabled: reason };
  }
  return since === doc.failing_since_ms ? { disabled: null } : { next: { ...doc, failing_since_ms: since }, disabled: null };
}

const newId = () => `wh_${randomBytes(15).toString('base64url').replace(/[-_]/g, '0')}`;

function checkEvents(events: unknown): SubscribableEventType[] | null {
  if (events === undefined || events === null) return null;
  const known = new Set<string>(SUBSCRIBABLE_EVENT_TYPES);
  if (!Array.isArray(events) || events.length === 0 || events.some((e) => typeof e !== 'string' || !known.has(e))) {
    throw new EndpointError('invalid_events', `"events" must be a non-empty list of: ${SUBSCRIBABLE_EVENT_TYPES.join(', ')} (or left out for all).`);
  }
  return [...new Set(events as SubscribableEventType[])];
}

/** Where endpoints may point: the operator's opened targets, and the resolver that checks names. */
export interface EndpointTargetRules {
  allowedTargets?: AllowedTargets;
  lookup?: Lookup;
}

/** Webhook endpoints of API keys: create (secret shown once), list, read, delete, rotate, enable, disable. */
export class EndpointStore {
  private readonly listed = new Map<string, { docs: EndpointDoc[]; atMs: number }>();

  private readonly kv: Kv;
  private readonly clock: () => number;
  private readonly targets: EndpointTargetRules;
  constructor(kv: Kv, clock: () => number = Date.now, targets: EndpointTargetRules = {}) {
    this.kv = kv;
    this.clock = clock;
    this.targets = targets;
  }

  /** The key's endpoints as read at most ENDPOINT_LIST_CACHE_MS ago (or changed here since). */
  async listRecent(prefix: string): Promise<EndpointDoc[]> {
    const cached = this.listed.get(prefix);
    const now = this.clock();
    if (cached && now - cached.atMs < ENDPOINT_LIST_CACHE_MS && now >= cached.atMs) return cached.docs;
    const docs = await this.list(prefix);
    this.listed.set(prefix, { docs, atMs: now });
    if (this.listed.size > 10_000) this.listed.delete(this.listed.keys().next().value!);
    return docs;
  }

  /** An endpoint of `prefix` changed (here, or as the dispatcher saw): the next listRecent reads again. */
  changed(prefix: string): void {
    this.listed.delete(prefix);
  }

  async create(prefix: string, mode: KeyMode, input: NewEndpoint, nowMs: number): Promise<{ endpoint: EndpointView; secret: string }> {
    if (typeof input.url !== 'string') throw new EndpointError('invalid_url', '"url" is required: the https URL that receives the events.');
    // The name is resolved now too (every address must be allowed), so a name that points at a
    // private address is refused at once rather than only failing at every attempt.
    const resolved = await resolveEndpointHost(input.url, mode, this.targets.allowedTargets ?? NO_PRIVATE_TARGETS, this.targets.lookup ?? systemLookup);
    if (!resolved.ok) throw new EndpointError('invalid_url', resolved.reason);
    const url = resolved;
    const events = checkEvents(input.events);
    const description = input.description === undefined || input.description === null ? null : input.description;
    if (description !== null && (typeof description !== 'string' || description.length > MAX_DESCRIPTION_LENGTH)) {
      throw new EndpointError('invalid_description', `"description" must be text of at most ${MAX_DESCRIPTION_LENGTH} characters.`);
    }
    const id = newId();
    // The index is the one document every creation of this key changes: the limit holds under concurrency.
    const room = await this.kv.update<string[], boolean>(pushKeys.endpointIndex(prefix), (ids) => {
      const current = ids ?? [];
      if (current.length >= MAX_ENDPOINTS_PER_KEY) return { result: false };
      return { next: [...current, id], result: true };
    });
    this.changed(prefix);
    if (!room) throw new EndpointError('too_many_endpoints', `A key can have at most ${MAX_ENDPOINTS_PER_KEY} webhook endpoints; delete one first.`);
    const secret = generateSecret();
    const doc: EndpointDoc = {
      id, key_prefix: prefix, mode, url: url.url, events, description, status: 'enabled', disabled_reason: null, disabled_at_ms: null,
      secrets: [{ secret, until_ms: null }], created_at_ms: nowMs, failing_since_ms: null,
    };
    await this.kv.set(pushKeys.endpoint(prefix, id), doc);
    this.changed(prefix);
    return { endpoint: endpointView(doc), secret };
  }

  async list(prefix: string): Promise<EndpointDoc[]> {
    const ids = (await this.kv.get<string[]>(pushKeys.endpointIndex(prefix))) ?? [];
    const docs = await this.kv.getMany<EndpointDoc>(ids.map((id) => pushKeys.endpoint(prefix, id)));
    return docs.filter((d): d is EndpointDoc => d !== null);
  }

  get(prefix: string, id: string): Promise<EndpointDoc | null> {
    return this.kv.get<EndpointDoc>(pushKeys.endpoint(prefix, id));
  }

  async remove(prefix: string, id: string): Promise<boolean> {
    const existed = (await this.get(prefix, id)) !== null;
    await this.kv.delete(pushKeys.endpoint(prefix, id));
    await this.kv.update<string[], void>(pushKeys.endpointIndex(prefix), (ids) => ({
      next: ids?.includes(id) ? ids.filter((x) => x !== id) : undefined, result: undefined,
    }));
    this.changed(prefix);
    return existed;
  }

  /** A new secret; the old ones keep signing for 24 h. Null when there is no such endpoint. */
  async rotate(prefix: string, id: string, nowMs: number): Promise<string | null> {
    const secret = generateSecret();
    this.changed(prefix);
    return this.kv.update<EndpointDoc, string | null>(pushKeys.endpoint(prefix, id), (doc) => {
      if (!doc) return { result: null };
      const kept = doc.secrets
        .map((s) => ({ secret: s.secret, until_ms: s.until_ms ?? nowMs + ROTATION_OVERLAP_MS }))
        .filter((s) => s.until_ms > nowMs);
      return { next: { ...doc, secrets: [{ secret, until_ms: null }, ...kept] }, result: secret };
    });
  }

  /** Enables the endpoint; its failure streak starts again. Null when there is no such endpoint. */
  async enable(prefix: string, id: string): Promise<EndpointDoc | null> {
    this.changed(prefix);
    return this.kv.update<EndpointDoc, EndpointDoc | null>(pushKeys.endpoint(prefix, id), (doc) => {
      if (!doc) return { result: null };
      const next: EndpointDoc = { ...doc, status: 'enabled', disabled_reason: null, disabled_at_ms: null, failing_since_ms: null };
      return { next, result: next };
    });
  }

  /**
   * Records an attempt's outcome on the endpoint's health: a success ends a failure streak; a
   * failure starts one or, after `failingLimitMs` of nothing but failures (or at a 410), disables
   * the endpoint. Answers whether this call disabled it (so the owner is told once).
   */
  async recordOutcome(
    prefix: string, id: string, outcome: { ok: boolean; gone: boolean }, nowMs: number, failingLimitMs: number,
  ): Promise<DisabledReason | null> {
    const disabled = await this.kv.update<EndpointDoc, DisabledReason | null>(pushKeys.endpoint(prefix, id), (doc) => {
      if (!doc) return { result: null };
      const health = healthAfter(doc, outcome, nowMs, failingLimitMs);
      return { next: health.next, result: health.disabled };
    });
    if (disabled) this.changed(prefix);
    return disabled;
  }

}

export { WEBHOOK_EVENT_TYPES };
