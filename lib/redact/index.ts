/**
 * Personal-data removal for carrier free text (remarks, status texts, locations), applied before a
 * scan leaves the process that fetched it (decisions.md, "Personal data").
 *
 * Pure and cheap: every pattern is precompiled in patterns.ts; one pass over the characters counts
 * digits and spots '@', ':'/'=' and decimals, and label words are looked up with indexOf on a
 * lower-cased copy, so a pattern family only runs when it can match at all. Replacement uses an
 * exec loop (faster in V8 than String.replace with a callback).
 */
import { nameBefore, redactNames } from './names.ts';
import * as patterns from './patterns.ts';

// Local copies: a hot loop reading imported bindings can go through module-namespace getters
// (esbuild/tsx CJS interop); reading module-level constants does not.
const {
  AADHAAR_GROUPED,
  AADHAAR_LABELLED,
  ADDRESS_LABELLED,
  ADDRESS_NDR_VALUE,
  ADJACENT_REDACTIONS,
  EMAIL,
  GPS_BARE_PAIR,
  GPS_LABELLED_PAIR,
  GPS_LABELLED_SINGLE,
  ID_LABELLED,
  MOBILE,
  OTP_LABELLED,
  OTP_TRAILING,
  PAN,
  PHONE_LABELLED,
  REDACTED,
  REFERENCE_LABEL_BEFORE,
  TOLL_FREE,
} = patterns;

export { REDACTED };

/** Replacement for one match; returning m[0] keeps the match unchanged. */
type Replacer = (m: RegExpExecArray, text: string, floor: number) => string;

/**
 * Replaces every match of the global regex `re` in `text` by `fn(match)`. Returns `text` itself when
 * nothing changed. `floor` tells the replacer where the untouched text starts (end of the previous
 * match), for replacers that look back.
 */
function sub(text: string, re: RegExp, fn: Replacer): string {
  re.lastIndex = 0;
  let m = re.exec(text);
  if (m === null) return text;
  let out = '';
  let last = 0;
  let changed = false;
  do {
    const replacement = fn(m, text, last);
    if (replacement !== m[0]) {
      out += text.slice(last, m.index) + replacement;
      last = m.index + m[0].length;
      changed = true;
    }
    m = re.exec(text);
  } while (m !== null);
  return changed ? out + text.slice(last) : text;
}

const whole: Replacer = () => REDACTED;
/** Keeps capture group 1 (the label), redacts the rest. */
const keepLabel: Replacer = (m) => (m[1] as string) + REDACTED;
/** Keeps capture groups 1 and 2 (label and separator), redacts the rest. */
const keepLabelAndSep: Replacer = (m) => (m[1] as string) + (m[2] as string) + REDACTED;
/** Redacts the number, keeps capture group 1 (the trailing " is your OTP"). */
const keepTail: Replacer = (m) => REDACTED + (m[1] as string);

const isDigit = (c: number): boolean => c >= 48 && c <= 57;
const isAsciiLetter = (c: number): boolean => (c >= 97 && c <= 122) || (c >= 65 && c <= 90);
const isAsciiLetterOrDigit = (c: number): boolean => isDigit(c) || isAsciiLetter(c);

/** Bare coordinate pairs only inside India's bounding box (lat 6-37, long 68-97). */
const barePair: Replacer = (m) => {
  const s = m[0];
  const lat = parseFloat(s);
  const lon = parseFloat(s.slice(s.indexOf(',') + 1));
  return lat >= 6 && lat < 38 && lon >= 68 && lon < 98 ? REDACTED : s;
};

const DIGIT_RUNS = /\d+/g;

/**
 * "Ph: 011-23456789 12 pcs": take digit groups until the number is complete (>= 10 digits) so the
 * "12 pcs" stays; accept 8 (local landline) to 13 digits; toll-free 1800/1860 numbers stay.
 */
const labelledPhone: Replacer = (m) => {
  const label = m[1] as string;
  const num = m[2] as string;
  DIGIT_RUNS.lastIndex = 0;
  let total = 0;
  let end = 0;
  let digits = '';
  let d: RegExpExecArray | null;
  while ((d = DIGIT_RUNS.exec(num)) !== null) {
    total += d[0].length;
    digits += d[0];
    end = d.index + d[0].length;
    if (total >= 10) break;
  }
  if (total < 8 || total > 13 || TOLL_FREE.test(digits)) return m[0];
  return label + REDACTED + num.slice(end);
};

const ONLY_DIGITS = /^\d+$/;

/**
 * Bare mobile numbers. Not when glued to a letter or digit ("FMPC9279658213", longer digit runs) or
 * when a plain digit run follows "AWB", "Order no", "Ref:" … (a reference, not a phone). A
 * capitalised name written right before the number goes with it
 * ("Out for Delivery - Suresh Kumar (98765 43210)" → "… - [redacted] ([redacted])").
 */
function redactMobiles(text: string): string {
  const re = MOBILE;
  re.lastIndex = 0;
  let out = '';
  let last = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    const at = m.index;
    if (at > 0 && isAsciiLetterOrDigit(text.charCodeAt(at - 1))) continue;
    if (ONLY_DIGITS.test(m[0]) && REFERENCE_LABEL_BEFORE.test(text.slice(Math.max(0, at - 24), at))) continue;
    const name = nameBefore(text, at, last);
    out += name === null ? text.slice(last, at) : text.slice(last, name[0]) + REDACTED + text.slice(name[1], at);
    out += REDACTED;
    last = at + m[0].length;
  }
  return last === 0 ? text : out + text.slice(last);
}

const labelledId: Replacer = (m) => (/\d/.test(m[2] as string) ? (m[1] as string) + REDACTED : m[0]);

const labelledAddress: Replacer = (m) => {
  const label = m[1] as string;
  const value = m[2] as string;
  const trimmed = value.trimEnd();
  if (trimmed.length === 0 || trimmed === REDACTED || ADDRESS_NDR_VALUE.test(trimmed)) return m[0];
  return label + REDACTED + value.slice(trimmed.length);
};

const has = (lower: string, word: string): boolean => lower.indexOf(word) !== -1;

/** Returns the text with personal data replaced by '[redacted]'. Pure, no I/O. null/undefined in → same out. */
export function redactText(text: string): string {
  // Runtime guard for untyped callers (raw carrier JSON): null/undefined/'' come back unchanged.
  if (typeof text !== 'string' || text.length < 6) return text;

  // One pass over the characters decides which pattern families can match at all.
  const len = text.length;
  let digits = 0;
  let run = 0;
  let maxRun = 0;
  let at = false;
  let labelSep = false;
  let decimal = false;
  let letterDigit = false; // a letter right before a digit ("E1234F", "DL-14…" aside): PAN candidate
  for (let i = 0; i < len; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      if (run === 0 && i > 0 && isAsciiLetter(text.charCodeAt(i - 1))) letterDigit = true;
      digits++;
      if (++run > maxRun) maxRun = run;
      continue;
    }
    if (c === 46 /* . */) {
      if (run > 0 && isDigit(text.charCodeAt(i + 1))) decimal = true;
    } else if (c === 64 /* @ */) {
      at = true;
    } else if (c === 58 /* : */ || c === 61 /* = */) {
      labelSep = true;
    }
    run = 0;
  }

  let out = text;
  let lower: string | undefined;
  if (at) out = sub(out, EMAIL, whole);

  // Every digit-based item has at least 4 digits (OTP 4, coordinates 2+2, phones 8+, ids 4+).
  if (digits >= 4) {
    lower = out.toLowerCase();
    if (decimal) {
      // Pairs first: "Lat/Long: 19.0760, 72.8777" is one pair, not a "Long: 19.0760".
      if (has(lower, 'geo') || has(lower, 'gps') || has(lower, 'loc') || has(lower, 'coord') || has(lower, 'lat')) {
        out = sub(out, GPS_LABELLED_PAIR, keepLabel);
      }
      if (has(lower, 'lat') || has(lower, 'lng') || has(lower, 'lon')) {
        out = sub(out, GPS_LABELLED_SINGLE, keepLabelAndSep);
      }
      out = sub(out, GPS_BARE_PAIR, barePair);
    }
    if (has(lower, 'aadh') || has(lower, 'adha') || has(lower, 'adhar') || has(lower, 'uid')) {
      out = sub(out, AADHAAR_LABELLED, keepLabel);
    }
    if (digits >= 12) out = sub(out, AADHAAR_GROUPED, whole);
    if (letterDigit && maxRun >= 4) out = sub(out, PAN, whole);
    if (
      has(lower, 'id') || has(lower, 'epic') || has(lower, 'licen') || has(lower, 'dl') ||
      has(lower, 'passport') || has(lower, 'pan') || has(lower, 'ration') || has(lower, 'kyc')
    ) {
      out = sub(out, ID_LABELLED, labelledId);
    }
    if (has(lower, 'otp') || has(lower, 'pass') || has(lower, 'code') || has(lower, 'pin')) {
      out = sub(out, OTP_LABELLED, keepLabelAndSep);
      out = sub(out, OTP_TRAILING, keepTail);
    }
    if (
      digits >= 8 &&
      (has(lower, 'ph') || has(lower, 'tel') || has(lower, 'mob') || has(lower, 'cell') ||
        has(lower, 'contact') || has(lower, 'landline') || has(lower, 'whats') || has(lower, 'call'))
    ) {
      out = sub(out, PHONE_LABELLED, labelledPhone);
    }
    if (digits >= 10) out = redactMobiles(out);
  }

  if (labelSep) {
    lower ??= out.toLowerCase();
    if (has(lower, 'add')) out = sub(out, ADDRESS_LABELLED, labelledAddress);
  }

  out = redactNames(out);

  if (out !== text && out.indexOf(REDACTED) !== out.lastIndexOf(REDACTED)) {
    out = sub(out, ADJACENT_REDACTIONS, whole);
  }
  return out;
}

export function redactNullable(text: string | null): string | null {
  return text === null ? null : redactText(text);
}

/** true when redactText would change the text (useful for metrics). */
export function containsPersonalData(text: string): boolean {
  return typeof text === 'string' && redactText(text) !== text;
}
