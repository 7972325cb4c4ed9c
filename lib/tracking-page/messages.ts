/**
 * The page's words: ICU MessageFormat catalogues (messages/<lang>.json) formatted with
 * intl-messageformat, and dates and times through Intl with the `-IN` locales in India Standard
 * Time. Catalogues are read once at import; each message is parsed once, on first use.
 */
import { IntlMessageFormat, type PrimitiveType } from 'intl-messageformat';
import en from './messages/en.json' with { type: 'json' };
import hi from './messages/hi.json' with { type: 'json' };
import ta from './messages/ta.json' with { type: 'json' };
import bn from './messages/bn.json' with { type: 'json' };
import { istDayStartMs } from '../time/ist-day.ts';
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../time/index.ts';
import type { Lang } from './types.ts';

/** English is the reference: every key it has, every other catalogue must have (messages.test.ts). */
export type MessageKey = keyof typeof en;
export type Catalogue = Record<string, string>;

export const CATALOGUES: Record<Lang, Catalogue> = { en, hi, ta, bn };

const TIME_ZONE = 'Asia/Kolkata';
const locale = (lang: Lang) => `${lang}-IN`;

const compiled = new Map<string, IntlMessageFormat>();

/** The message `key` in `lang`, with its arguments filled in; English when a catalogue lacks it. */
export function t(lang: Lang, key: MessageKey, values?: Record<string, PrimitiveType>): string {
  const id = `${lang}:${key}`;
  let format = compiled.get(id);
  if (!format) {
    const source = CATALOGUES[lang][key] ?? en[key];
    format = new IntlMessageFormat(source, locale(lang));
    compiled.set(id, format);
  }
  return String(format.format(values));
}

// Intl formatters cost far more to build than to use: one of each per language.
function perLang<T>(build: (lang: Lang) => T): (lang: Lang) => T {
  const made = new Map<Lang, T>();
  return (lang) => {
    let value = made.get(lang);
    if (value === undefined) made.set(lang, (value = build(lang)));
    return value;
  };
}

const dayFormat = perLang((lang) => new Intl.DateTimeFormat(locale(lang), { timeZone: TIME_ZONE, weekday: 'long', day: 'numeric', month: 'long' }));
const timeFormat = perLang((lang) => new Intl.DateTimeFormat(locale(lang), {
  timeZone: TIME_ZONE, day: 'numeric', month: 'short', hour: 'numeric', minute: '2-digit',
}));
const clockFormat = perLang((lang) => new Intl.DateTimeFormat(locale(lang), { timeZone: TIME_ZONE, hour: 'numeric', minute: '2-digit' }));
const relativeFormat = perLang((lang) => new Intl.RelativeTimeFormat(locale(lang), { numeric: 'auto' }));

/** An IST calendar day (YYYY-MM-DD, as the prediction gives it), e.g. "Thursday, 3 December". */
export function formatDay(lang: Lang, day: string): string {
  // Noon IST: the middle of that day, whatever the formatter does with edges.
  return dayFormat(lang).format(istDayStartMs(day) + 12 * HOUR_MS);
}

/** An instant in IST, short (the events list), e.g. "20 Nov, 9:15 am". */
export function formatTime(lang: Lang, iso: string): string {
  return timeFormat(lang).format(Date.parse(iso));
}

/** The IST day of an instant, as formatDay writes it. */
export function formatDayOf(lang: Lang, iso: string): string {
  return dayFormat(lang).format(Date.parse(iso));
}

/** The IST time of day of an instant, e.g. "1:30 pm". */
export function formatClock(lang: Lang, iso: string): string {
  return clockFormat(lang).format(Date.parse(iso));
}

/** How long ago, in the largest whole unit: "5 minutes ago", "3 hours ago", "yesterday". */
export function formatAgo(lang: Lang, iso: string, nowMs: number): string {
  const ms = Math.max(0, nowMs - Date.parse(iso));
  const rtf = relativeFormat(lang);
  if (ms < HOUR_MS) return rtf.format(-Math.floor(ms / MINUTE_MS), 'minute');
  if (ms < DAY_MS) return rtf.format(-Math.floor(ms / HOUR_MS), 'hour');
  return rtf.format(-Math.floor(ms / DAY_MS), 'day');
}
