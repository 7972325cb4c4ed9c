/**
 * The contact vault: a watch's customer contact, sealed with AES-256-GCM (decisions.md "Buyer
 * contacts"). The document beside the watch holds the channels, the language, the masked forms the
 * answers show and the sealed contact; only `open` (called by the notice sender) decrypts it. The
 * sealed text is bound to its watch (key prefix, carrier, number as associated data), so a sealed
 * contact copied onto another watch does not open.
 *
 * Erasure: `erase` deletes the document at once (the watch deleted, `DELETE …/customer`, the key
 * revoked); `endBy` marks when a shipment's contact goes by itself (7 days after it ended), and
 * `sweep` erases those due. What the embedded store's journal still holds of an erased document is
 * ciphertext until the journal is compacted.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Kv } from '../kv/index.ts';
import { DAY_MS } from '../time/index.ts';
import { maskEmail, maskPhone, type Contact, type NoticeChannel } from './contact.ts';

/** A contact is erased this long after its shipment ended (delivered, returned, lost). */
export const CONTACT_AFTER_END_MS = 7 * DAY_MS;
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export interface ContactDoc {
  channels: NoticeChannel[];
  language: string;
  /** What answers show: `+91******1234`, `r***@example.com`. */
  phone_masked: string | null;
  email_masked: string | null;
  /** base64url of iv ‖ tag ‖ ciphertext of the contact's JSON. */
  sealed: string;
  created_ms: number;
  /** When it is erased by itself (7 days after the shipment ended); null while it moves. */
  erase_at_ms: number | null;
}

/** What an answer shows of a watch's customer (contracts.md): never the contact itself. */
export interface CustomerView {
  channels: NoticeChannel[];
  language: string;
  phone: string | null;
  email: string | null;
}

export const customerViewOf = (doc: ContactDoc): CustomerView => ({
  channels: doc.channels, language: doc.language, phone: doc.phone_masked, email: doc.email_masked,
});

const contactKey = (prefix: string, carrier: string, awb: string) => `contact:{${prefix}}:${carrier}:${awb}`;
/** Contacts with an erase time: members `prefix|carrier|awb`, due at that time. */
const ERASE_SCHEDULE = 'contacts-erase';

/**
 * The vault's key: CONTACT_ENCRYPTION_KEY (32 bytes, base64) when set; otherwise a key made once and
 * kept in `file` with mode 0600 (the embedded default). Every process that sends notices or takes
 * watches must have the same key: set the variable alike on all of them when they share Redis.
 */
export function contactKeyOf(configured: string | undefined, file: string): Buffer {
  if (configured) {
    const key = Buffer.from(configured, 'base64');
    if (key.length !== KEY_BYTES) throw new Error('CONTACT_ENCRYPTION_KEY must be 32 bytes, base64-encoded (e.g. `openssl rand -base64 32`)');
    return key;
  }
  if (existsSync(file)) {
    const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
    if (key.length !== KEY_BYTES) {
      throw new Error(`${file} does not hold a 32-byte base64 key; restore it from a backup (contacts sealed with it cannot be read otherwise)`);
    }
    return key;
  }
  mkdirSync(dirname(file), { recursive: true });
  const key = randomBytes(KEY_BYTES);
  try {
    writeFileSync(file, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    // Another process of this DATA_DIR made it first: use theirs.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return contactKeyOf(undefined, file);
    throw err;
  }
  chmodSync(file, 0o600);
  return key;
}

export function seal(key: Buffer, contact: Contact, boundTo: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(boundTo, 'utf8'));
  const body = Buffer.concat([cipher.update(JSON.stringify(contact), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
}

/** The contact, or null when the sealed text does not open with this key for this watch. */
export function unseal(key: Buffer, sealed: string, boundTo: string): Contact | null {
  const raw = Buffer.from(sealed, 'base64url');
  if (raw.length <= IV_BYTES + TAG_BYTES) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(boundTo, 'utf8'));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    const text = Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    return JSON.parse(text) as Contact;
  } catch {
    return null;
  }
}

export class ContactVault {
  private readonly kv: Kv;
  private readonly key: Buffer;
  constructor(kv: Kv, key: Buffer) {
    this.kv = kv;
    this.key = key;
  }

  /** Stores (or replaces) a watch's contact. */
  async put(
    prefix: string, carrier: string, awb: string, input: { channels: NoticeChannel[]; language: string; contact: Contact }, nowMs: number,
  ): Promise<CustomerView> {
    const doc: ContactDoc = {
      channels: input.channels, language: input.language,
      phone_masked: input.contact.phone ? maskPhone(input.contact.phone) : null,
      email_masked: input.contact.email ? maskEmail(input.contact.email) : null,
      sealed: seal(this.key, input.contact, `${prefix}|${carrier}|${awb}`),
      created_ms: nowMs, erase_at_ms: null,
    };
    await this.kv.set(contactKey(prefix, carrier, awb), doc);
    return customerViewOf(doc);
  }

  async view(prefix: string, carrier: string, awb: string): Promise<CustomerView | null> {
    const doc = await this.kv.get<ContactDoc>(contactKey(prefix, carrier, awb));
    return doc ? customerViewOf(doc) : null;
  }

  /** The settings and the contact itself: for the notice sender only. Null when erased (or unreadable). */
  async open(prefix: string, carrier: string, awb: string): Promise<{ doc: ContactDoc; contact: Contact } | null> {
    const doc = await this.kv.get<ContactDoc>(contactKey(prefix, carrier, awb));
    if (!doc) return null;
    const contact = unseal(this.key, doc.sealed, `${prefix}|${carrier}|${awb}`);
    return contact ? { doc, contact } : null;
  }

  /** Erases a watch's contact now; answers whether there was one. */
  async erase(prefix: string, carrier: string, awb: string): Promise<boolean> {
    const had = await this.kv.update<ContactDoc, boolean>(contactKey(prefix, carrier, awb), (doc) => ({ next: doc ? null : undefined, result: doc !== null }));
    await this.kv.unschedule(ERASE_SCHEDULE, `${prefix}|${carrier}|${awb}`);
    return had;
  }

  /** The shipment ended at `endedMs`: its contact goes 7 days later (the first end counts). */
  async endBy(prefix: string, carrier: string, awb: string, endedMs: number): Promise<void> {
    const at = endedMs + CONTACT_AFTER_END_MS;
    const set = await this.kv.update<ContactDoc, boolean>(contactKey(prefix, carrier, awb), (doc) => {
      if (!doc || doc.erase_at_ms !== null) return { result: false };
      return { next: { ...doc, erase_at_ms: at }, result: true };
    });
    if (set) await this.kv.schedule(ERASE_SCHEDULE, `${prefix}|${carrier}|${awb}`, at);
  }

  /** Erases every contact whose time has come; answers how many. */
  async sweep(nowMs: number): Promise<number> {
    let erased = 0;
    for (;;) {
      const due = await this.kv.claimDue(ERASE_SCHEDULE, nowMs, 60_000, 500);
      if (due.length === 0) return erased;
      for (const member of due) {
        const [prefix, carrier, ...awb] = member.split('|');
        if (prefix && carrier && awb.length) erased += (await this.erase(prefix, carrier, awb.join('|'))) ? 1 : 0;
        else await this.kv.unschedule(ERASE_SCHEDULE, member);
      }
    }
  }
}
