/**
 * Personal-data removal for carrier free text (remarks, status texts, locations), applied before a
 * scan leaves the process that fetched it (decisions.md, "Personal data").
 *
 * Pure and cheap: every pattern is precompiled in patterns.ts; one pass over the characters counts
 * digits and spots '@', ':'/'=' and decimals, and one regex pass over a lower-cased copy finds the
 * label words ("otp", "ph", "aadhaar", "lat" …), so a pattern family only runs when it can match at
 * all. Replacement uses an exec loop (faster in V8 than String.replace with a callback).
 */
import { redactCodedStaff } from './coded-staff.ts';
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
  GPS_BARE_PAIR,
  GPS_LABELLED_PAIR,
  GPS_LABELLED_SINGLE,
  ID_LABELLED,
  MOBILE,
  MOBILE_CUT_AT_END,
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
type Replacer = (m: RegExpExecArray) => string;

/** Replaces every match of the global regex `re` in `text` by `fn(match)`; `text` itself when unchanged. */
function sub(text: string, re: RegExp, fn: Replacer): string {
  re.lastIndex = 0;
  let m = re.exec(text);
  if (m === null) return text;
  let out = '';
  let last = 0;
  let changed = false;
  do {
    const replacement = fn(m);
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
    if (at > 0 && isAsciiLetterOrDigit(text.charCodeAt(at - 1))) {
      re.lastIndex = at + 1; // "X+91 98765 43210": retry without the glued prefix
      continue;
    }
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

/** Local-part characters of an e-mail address: letters, digits and . _ % + - */
function isLocalChar(c: number): boolean {
  return isAsciiLetterOrDigit(c) || c === 46 || c === 95 || c === 37 || c === 43 || c === 45;
}

/** Domain characters: letters, digits, '.', '-'. */
function isDomainChar(c: number): boolean {
  return isAsciiLetterOrDigit(c) || c === 46 || c === 45;
}

/**
 * E-mail addresses, found from each '@' outwards (linear; a regex would rescan a long local part
 * from every start position). Needs a non-empty local part and a dotted domain ending in 2+ letters.
 */
function redactEmails(text: string): string {
  let out = '';
  let last = 0;
  let at = text.indexOf('@');
  while (at !== -1) {
    let start = at;
    while (start > last && isLocalChar(text.charCodeAt(start - 1))) start--;
    let end = at + 1;
    while (end < text.length && isDomainChar(text.charCodeAt(end))) end++;
    // "mail me at a@b.com." — a trailing dot or dash ends the sentence, not the domain.
    while (end > at + 1 && (text.charCodeAt(end - 1) === 46 || text.charCodeAt(end - 1) === 45)) end--;
    const dot = text.lastIndexOf('.', end - 1);
    let tld = dot > at + 1 ? end - dot - 1 : 0;
    for (let i = dot + 1; tld > 0 && i < end; i++) if (!isAsciiLetter(text.charCodeAt(i))) tld = 0;
    if (start < at && tld >= 2) {
      out += text.slice(last, start) + REDACTED;
      last = end;
    }
    at = text.indexOf('@', Math.max(at + 1, last));
  }
  return last === 0 ? text : out + text.slice(last);
}

// Label words that make a labelled pattern family worth running, found in one regex pass over the
// lower-cased text (cheaper than an indexOf per word).
const GPS_PAIR = 1;
const GPS_SINGLE = 2;
const AADHAAR = 4;
const ID_DOC = 8;
const OTP = 16;
const PHONE = 32;
const ADDRESS = 64;
const HINT_BITS: ReadonlyMap<string, number> = new Map([
  ['lat', GPS_PAIR | GPS_SINGLE], ['lng', GPS_SINGLE], ['lon', GPS_SINGLE],
  ['geo', GPS_PAIR], ['gps', GPS_PAIR], ['loc', GPS_PAIR], ['coord', GPS_PAIR],
  ['aadh', AADHAAR], ['adha', AADHAAR], ['adhar', AADHAAR], ['uid', AADHAAR],
  ['id', ID_DOC], ['epic', ID_DOC], ['licen', ID_DOC], ['dl', ID_DOC], ['passport', ID_DOC],
  ['pan', ID_DOC], ['ration', ID_DOC], ['kyc', ID_DOC],
  ['otp', OTP], ['pass', OTP], ['code', OTP], ['pin', OTP],
  ['ph', PHONE], ['tel', PHONE], ['mob', PHONE], ['cell', PHONE], ['contact', PHONE],
  ['landline', PHONE], ['whats', PHONE], ['call', PHONE],
  ['add', ADDRESS],
]);
const HINTS = new RegExp([...HINT_BITS.keys()].sort((x, y) => y.length - x.length).join('|'), 'g');

function labelHints(lower: string): number {
  HINTS.lastIndex = 0;
  let bits = 0;
  let m: RegExpExecArray | null;
  while ((m = HINTS.exec(lower)) !== null) bits |= HINT_BITS.get(m[0]) ?? 0;
  return bits;
}

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
  let hints = -1; // label hints, computed on first need
  if (at) out = redactEmails(out);

  // Every digit-based item has at least 4 digits (OTP 4, coordinates 2+2, phones 8+, ids 4+).
  if (digits >= 4) {
    hints = labelHints(out.toLowerCase());
    if (decimal) {
      // Pairs first: "Lat/Long: 19.0760, 72.8777" is one pair, not a "Long: 19.0760".
      if ((hints & GPS_PAIR) !== 0) {
        out = sub(out, GPS_LABELLED_PAIR, keepLabel);
      }
      if ((hints & GPS_SINGLE) !== 0) {
        out = sub(out, GPS_LABELLED_SINGLE, keepLabelAndSep);
      }
      out = sub(out, GPS_BARE_PAIR, barePair);
    }
    if ((hints & AADHAAR) !== 0) {
      out = sub(out, AADHAAR_LABELLED, keepLabel);
    }
    if (digits >= 12) out = sub(out, AADHAAR_GROUPED, whole);
    if (letterDigit && maxRun >= 4) out = sub(out, PAN, whole);
    if ((hints & ID_DOC) !== 0) {
      out = sub(out, ID_LABELLED, labelledId);
    }
    if ((hints & OTP) !== 0) {
      out = sub(out, OTP_LABELLED, keepLabelAndSep);
      out = sub(out, OTP_TRAILING, keepTail);
    }
    if (digits >= 8 && (hints & PHONE) !== 0) {
      out = sub(out, PHONE_LABELLED, labelledPhone);
    }
    if (digits >= 10) out = redactMobiles(out);
    if (MOBILE_CUT_AT_END.test(out)) out = out.replace(MOBILE_CUT_AT_END, REDACTED);
  }

  if (labelSep) {
    if (hints === -1) hints = labelHints(out.toLowerCase());
    if ((hints & ADDRESS) !== 0) out = sub(out, ADDRESS_LABELLED, labelledAddress);
  }

  // Staff after a route or employee code ("383439-<name>…, MobileNo:- …"): only where a code (digits
  // and a hyphen) and a phone field (one redacted above, or a phone label) can both be.
  if (digits >= 2 && out.includes('-') && (out.includes(REDACTED) || (hints !== -1 && (hints & PHONE) !== 0))) {
    out = redactCodedStaff(out);
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
