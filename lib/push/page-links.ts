/**
 * The tracking page's links (contracts.md "Tracking page"): `/t/<token>` for a watched shipment and
 * `/o/<token>` for every watched parcel of one order of a key. A token is 24 bytes (32 base64url
 * characters) of HMAC-SHA256 under the deployment's page secret, over what it opens: the key, the
 * shipment and the moment its watch began (so a watch deleted and made again has a new link), or
 * the key and the order. It is not stored: the store holds the SHA-256 of each token handed out,
 * pointing at what it opens, and the link is computed again when a watch is read. A token names
 * nothing a visitor could change to reach another key's shipment: anything else is a miss.
 *
 * The secret is made once per deployment, atomically, in the push store (one Redis for every API
 * process, or DATA_DIR): every instance computes the same links.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import type { Kv } from '../kv/index.ts';
import type { KeyMode } from '../schemas/index.ts';
import { DAY_MS } from '../time/index.ts';

/** The tracking page's languages (contracts.md: more may follow). */
export const PAGE_LANGUAGES = ['en', 'hi', 'ta', 'bn'] as const;
export type PageLanguage = (typeof PAGE_LANGUAGES)[number];

/** A page stays 30 days after its shipment ended, then answers 404 (a watch itself ends 3 days after). */
export const PAGE_AFTER_END_MS = 30 * DAY_MS;

export type PageTarget =
  | { kind: 'shipment'; prefix: string; mode: KeyMode; carrier: string; awb: string; watched_since_ms: number }
  | { kind: 'order'; prefix: string; mode: KeyMode; order_id: string };

const TOKEN = /^[A-Za-z0-9_-]{32}$/;
const SECRET_KEY = 'page-secret';
const indexKey = (token: string) => `page:${createHash('sha256').update(token).digest('hex')}`;
/** The watches of one order of a key (members `carrier:AWB`), under the key's hash tag. */
export const orderIndexKey = (prefix: string, orderId: string) => `order:{${prefix}}:${orderId}`;

function messageOf(target: PageTarget): string {
  return target.kind === 'shipment'
    ? `t\n${target.prefix}\n${target.carrier}\n${target.awb}\n${target.watched_since_ms}`
    : `o\n${target.prefix}\n${target.order_id}`;
}

export class PageLinks {
  private readonly kv: Kv;
  private secret: Promise<Buffer> | null = null;
  constructor(kv: Kv) {
    this.kv = kv;
  }

  /** The deployment's secret: made by the first process that needs it, read by the others. */
  private key(): Promise<Buffer> {
    this.secret ??= this.kv.update<{ secret: string }, string>(SECRET_KEY, (current) => {
      if (current) return { result: current.secret };
      const secret = randomBytes(32).toString('base64url');
      return { next: { secret }, result: secret };
    }).then((secret) => Buffer.from(secret, 'base64url'));
    return this.secret;
  }

  /** The token of `target`: the same every time it is asked. */
  async tokenOf(target: PageTarget): Promise<string> {
    const mac = createHmac('sha256', await this.key()).update(messageOf(target)).digest();
    return mac.subarray(0, 24).toString('base64url');
  }

  /** Makes `target`'s token open it (idempotent), and answers the token. */
  async register(target: PageTarget): Promise<string> {
    const token = await this.tokenOf(target);
    await this.kv.set(indexKey(token), target);
    return token;
  }

  /** What a presented token opens, or null: malformed or never handed out. Whether it still opens is the caller's question. */
  async resolve(token: string): Promise<PageTarget | null> {
    if (!TOKEN.test(token)) return null;
    return this.kv.get<PageTarget>(indexKey(token));
  }

  /** Counts a watch into its order (its page lists every watched parcel of the order). */
  async addToOrder(prefix: string, orderId: string, carrier: string, awb: string): Promise<void> {
    await this.kv.setAdd(orderIndexKey(prefix, orderId), `${carrier}:${awb}`);
  }

  async removeFromOrder(prefix: string, orderId: string, carrier: string, awb: string): Promise<void> {
    await this.kv.setRemove(orderIndexKey(prefix, orderId), `${carrier}:${awb}`);
  }

  /** The order's watches, as `carrier:AWB` names (a name whose watch is gone is the reader's to skip). */
  orderMembers(prefix: string, orderId: string): Promise<string[]> {
    return this.kv.setMembers(orderIndexKey(prefix, orderId));
  }
}
