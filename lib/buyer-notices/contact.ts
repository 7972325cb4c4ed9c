/**
 * The shop's customer's contact as a watch carries it (contracts.md "Customer notices"): how a phone
 * number and an e-mail address are read, checked and masked. Pure.
 *
 * Only Indian mobile numbers are accepted (+91 and ten digits starting 6–9): every channel here is an
 * Indian one (DLT SMS, WhatsApp to Indian numbers), and a number written as 0XXXXXXXXXX, 91XXXXXXXXXX
 * or with spaces and dashes is the same number. The stored form is E.164 (`+91XXXXXXXXXX`).
 */
export const NOTICE_CHANNELS = ['whatsapp', 'sms', 'email'] as const;
export type NoticeChannel = (typeof NOTICE_CHANNELS)[number];

/** What is sealed in the vault: nothing else of the customer is kept. */
export interface Contact {
  phone: string | null;
  email: string | null;
}

/** The phone in E.164 (`+91XXXXXXXXXX`), or null when it is not an Indian mobile number. */
export function normalizePhone(input: string): string | null {
  const digits = input.replace(/[\s().-]/g, '');
  const m = /^(?:\+91|0091|91|0)?([6-9]\d{9})$/.exec(digits);
  return m ? `+91${m[1]}` : null;
}

/** A plain address check (one @, a dotted domain, no spaces, ≤ 254): the mail server has the last word. */
export function normalizeEmail(input: string): string | null {
  const email = input.trim();
  if (email.length > 254 || !/^[^\s@<>(),;:"]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/.test(email)) {
    return null;
  }
  const at = email.lastIndexOf('@');
  // The domain is case-insensitive; the local part is the mailbox's own business.
  return `${email.slice(0, at)}@${email.slice(at + 1).toLowerCase()}`;
}

/** `+91******1234`: the country code and the last four digits (what answers and lists may show). */
export function maskPhone(phone: string): string {
  return `${phone.slice(0, 3)}******${phone.slice(-4)}`;
}

/** `r***@example.com`: the first letter and the domain. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  return `${email.slice(0, 1)}***@${email.slice(at + 1)}`;
}

/** The channels a contact can serve, in the order asked, dropping those it has no address for. */
export function usableChannels(channels: readonly NoticeChannel[], contact: Contact): NoticeChannel[] {
  return channels.filter((c) => (c === 'email' ? contact.email !== null : contact.phone !== null));
}

/**
 * Why a contact cannot be stored as given, or null when it can: at least one channel, none twice,
 * and each channel's address present (WhatsApp and SMS need the phone, e-mail the address).
 */
export function contactProblem(channels: readonly NoticeChannel[], contact: Contact): string | null {
  if (channels.length === 0) return '"customer.channels" must name at least one of whatsapp, sms, email';
  if (new Set(channels).size !== channels.length) return '"customer.channels" names a channel twice';
  if (channels.some((c) => c !== 'email') && contact.phone === null) return '"customer.phone" is needed for whatsapp and sms';
  if (channels.includes('email') && contact.email === null) return '"customer.email" is needed for email';
  return null;
}
