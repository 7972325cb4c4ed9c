/**
 * What Meta's WhatsApp webhook brings (buyer-channels.md §1.4): message statuses, which name a
 * notice by its reference (`biz_opaque_callback_data`), and customers' replies, of which a STOP
 * stops their notices. The signature is checked over the raw bytes before anything is read.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Words that stop every notice to the sender (case and spaces aside). */
export const STOP_WORDS: ReadonlySet<string> = new Set(['stop', 'stop all', 'unsubscribe', 'cancel', 'end', 'quit']);

export const isStop = (text: string) => STOP_WORDS.has(text.trim().toLowerCase());

/** X-Hub-Signature-256: `sha256=` and the hex HMAC-SHA256 of the raw body under the app secret, compared in constant time. */
export function signedByMeta(raw: Buffer, header: string | string[] | undefined, secret: string | null): boolean {
  if (!secret || typeof header !== 'string' || !header.startsWith('sha256=')) return false;
  const given = Buffer.from(header.slice(7), 'hex');
  const wanted = createHmac('sha256', secret).update(raw).digest();
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}

interface WhatsAppWebhook {
  entry?: {
    changes?: {
      value?: {
        statuses?: { id?: string; status?: string; biz_opaque_callback_data?: string; errors?: { code?: number }[] }[];
        messages?: { from?: string; type?: string; text?: { body?: string }; button?: { text?: string } }[];
      };
    }[];
  }[];
}

export interface WhatsAppWebhookTarget {
  providerStatus(reference: string, status: string, providerId: string | null, errorCode: number | null): Promise<void>;
  /** A customer replied STOP from this phone (E.164). */
  stopFromReply(phone: string): Promise<void>;
}

/** Applies a verified webhook body: every status of a notice, every STOP. */
export async function applyWhatsAppWebhook(body: unknown, target: WhatsAppWebhookTarget): Promise<void> {
  const json = body as WhatsAppWebhook;
  for (const change of (json.entry ?? []).flatMap((e) => e.changes ?? [])) {
    for (const s of change.value?.statuses ?? []) {
      if (s.biz_opaque_callback_data && s.status) await target.providerStatus(s.biz_opaque_callback_data, s.status, s.id ?? null, s.errors?.[0]?.code ?? null);
    }
    for (const message of change.value?.messages ?? []) {
      const said = message.type === 'text' ? message.text?.body : message.type === 'button' ? message.button?.text : undefined;
      if (said && isStop(said) && message.from) await target.stopFromReply(`+${message.from}`);
    }
  }
}
