/**
 * A notice's words per channel, from the catalogues (messages/<lang>.json, ICU MessageFormat) and
 * the registered templates (config/notices.yaml). Pure.
 *
 * One text per notice and language serves every channel: the WhatsApp template's body, the DLT SMS
 * content template and the e-mail's text are the same words, so what a shop registers with Meta and
 * DLT (docs/integrators/customer-notices.md) is what the e-mail says too. A template's variables are
 * the names in braces, in the order they appear; their values are cut to 30 characters where DLT
 * allows no more (the shop's name and the reason), and never carry the customer's contact.
 */
import { IntlMessageFormat } from 'intl-messageformat';
import type { NoticeTemplates } from '../config/index.ts';
import { escapeHtml } from '../html/index.ts';
import { formatDay } from '../tracking-page/messages.ts';
import type { Lang } from '../tracking-page/types.ts';
import en from './messages/en.json' with { type: 'json' };
import hi from './messages/hi.json' with { type: 'json' };
import ta from './messages/ta.json' with { type: 'json' };
import bn from './messages/bn.json' with { type: 'json' };
import type { NoticeFacts, NoticeKind } from './kinds.ts';

export type NoticeMessageKey = keyof typeof en;
export const NOTICE_CATALOGUES: Record<Lang, Record<NoticeMessageKey, string>> = { en, hi, ta, bn };

/** DLT: a variable's value is at most 30 characters. */
export const VARIABLE_MAX = 30;

/** The values a template is filled with (the page link and the unsubscribe link are built by the sender). */
export interface NoticeValues {
  shop: string;
  awb: string;
  carrier: string;
  day: string;
  reason: string;
  link: string;
}

const compiled = new Map<string, IntlMessageFormat>();

/** A catalogue message in `lang` with its values; each message is parsed once, on first use. */
export function text(lang: Lang, key: NoticeMessageKey, values: Record<string, string> = {}): string {
  const id = `${lang}:${key}`;
  let format = compiled.get(id);
  if (!format) compiled.set(id, (format = new IntlMessageFormat(NOTICE_CATALOGUES[lang][key] ?? en[key], `${lang}-IN`)));
  return String(format.format(values));
}

/** The variables of a notice's template, in order of appearance. */
export function variablesOf(kind: NoticeKind, lang: Lang = 'en'): (keyof NoticeValues)[] {
  const names = [...NOTICE_CATALOGUES[lang][kind].matchAll(/\{(\w+)\}/g)].map((m) => m[1] as keyof NoticeValues);
  return [...new Set(names)];
}

const cut = (value: string) => (value.length > VARIABLE_MAX ? `${value.slice(0, VARIABLE_MAX - 1)}…` : value);

/** The template's values from the notice's facts, in the customer's language. */
export function valuesOf(facts: Pick<NoticeFacts, 'awb' | 'day' | 'reason'>, lang: Lang, shop: string, carrierName: string, link: string): NoticeValues {
  return {
    shop: cut(shop || text(lang, 'shop_unknown')),
    awb: facts.awb,
    carrier: cut(carrierName),
    day: facts.day ? formatDay(lang, facts.day) : text(lang, 'day_unknown'),
    reason: cut(text(lang, `reason.${facts.reason ?? 'other'}` as NoticeMessageKey)),
    link,
  };
}

/** The notice's words in `lang` with its values: what every channel shows. */
export function bodyOf(kind: NoticeKind, lang: Lang, values: NoticeValues): string {
  return text(lang, kind, { ...values });
}

/** WhatsApp Cloud API `template` object: the approved template by name and language, NAMED body parameters. */
export function whatsappTemplate(templates: NoticeTemplates, kind: NoticeKind, lang: Lang, values: NoticeValues) {
  return {
    name: templates.whatsapp[kind],
    language: { code: lang, policy: 'deterministic' as const },
    components: [{
      type: 'body' as const,
      parameters: variablesOf(kind, lang).map((name) => ({ type: 'text' as const, parameter_name: name, text: values[name] })),
    }],
  };
}

/** MSG91 Flow: the template id of the notice in that language and its variables by name. */
export function smsTemplate(
  templates: NoticeTemplates, kind: NoticeKind, lang: Lang, values: NoticeValues,
): { templateId: string; variables: Record<string, string> } {
  return { templateId: templates.sms[kind][lang], variables: Object.fromEntries(variablesOf(kind, lang).map((name) => [name, values[name]])) };
}

export interface NoticeEmail {
  subject: string;
  text: string;
  html: string;
}

/** The e-mail: the same words, the footer saying why it came and how to stop it (RFC 8058 headers are the sender's). */
export function emailOf(kind: NoticeKind, lang: Lang, values: NoticeValues, unsubscribeUrl: string): NoticeEmail {
  const body = bodyOf(kind, lang, values);
  const footer = text(lang, 'email_footer', { shop: values.shop, unsubscribe: unsubscribeUrl });
  return {
    subject: text(lang, `subject.${kind}` as NoticeMessageKey, { shop: values.shop }),
    text: `${body}\n\n${footer}\n`,
    html: `<!doctype html><html lang="${lang}"><body><p>${escapeHtml(body)}</p><p style="color:#555;font-size:small">${escapeHtml(footer)}</p></body></html>`,
  };
}
