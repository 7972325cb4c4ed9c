/**
 * Personal-data removal for carrier free text (remarks, status texts, locations), applied before a
 * scan leaves the process that fetched it (decisions.md, "Personal data"). Pure and allocation-light:
 * every pattern is precompiled in patterns.ts, and cheap pre-checks skip whole pattern families
 * (digit patterns without a digit, e-mail without '@', address without ':'/'='), so clean texts cost
 * a handful of short scans.
 */
import { redactNames } from './names.ts';
import {
  AADHAAR_GROUPED,
  AADHAAR_LABELLED,
  ADDRESS_LABELLED,
  ADDRESS_NDR_VALUE,
  ADJACENT_REDACTIONS,
  EMAIL,
  GPS_BARE_PAIR,
  GPS_LABELLED_PAIR,
  GPS_LABELLED_SINGLE,
  HAS_DECIMAL,
  HAS_DIGIT,
  HAS_DIGIT_RUN,
  HAS_LABEL_SEP,
  ID_LABELLED,
  MOBILE,
  OTP_LABELLED,
  OTP_TRAILING,
  PAN,
  PHONE_LABELLED,
  REDACTED,
  REFERENCE_LABEL_BEFORE,
  TOLL_FREE,
} from './patterns.ts';

export { REDACTED };

const KEEP_LABEL = `$1${REDACTED}`;
const DIGIT_RUNS = /\d+/g;
const ALL_DIGITS = /^\d+$/;
const HAS_DIGIT_CHAR = /\d/;

function labelledPhone(match: string, label: string, num: string): string {
  // Take digit groups until the number is complete (>= 10 digits), so "Ph: 011-23456789 12 pcs"
  // keeps "12 pcs". Accept 8 (local landline) to 13 digits.
  DIGIT_RUNS.lastIndex = 0;
  let total = 0;
  let end = 0;
  let digits = '';
  let m: RegExpExecArray | null;
  while ((m = DIGIT_RUNS.exec(num)) !== null) {
    total += m[0].length;
    digits += m[0];
    end = m.index + m[0].length;
    if (total >= 10) break;
  }
  if (total < 8 || total > 13 || TOLL_FREE.test(digits)) return match;
  return label + REDACTED + num.slice(end);
}

function mobile(match: string, offset: number, whole: string): string {
  // A bare digit run right after "AWB", "Order no", "Ref:" … is a reference, not a phone.
  if (ALL_DIGITS.test(match)) {
    const before = whole.slice(Math.max(0, offset - 24), offset);
    if (REFERENCE_LABEL_BEFORE.test(before)) return match;
  }
  return REDACTED;
}

function labelledId(match: string, label: string, value: string): string {
  return HAS_DIGIT_CHAR.test(value) ? label + REDACTED : match;
}

function labelledAddress(match: string, label: string, value: string): string {
  const trimmed = value.trimEnd();
  if (trimmed.length === 0 || ADDRESS_NDR_VALUE.test(trimmed) || trimmed === REDACTED) return match;
  return label + REDACTED + value.slice(trimmed.length);
}

/** Returns the text with personal data replaced by '[redacted]'. Pure, no I/O. null/undefined in → same out. */
export function redactText(text: string): string {
  // Runtime guard for untyped callers (raw carrier JSON): null/undefined/'' come back unchanged.
  if (typeof text !== 'string' || text.length < 6) return text;
  let out = text;

  if (out.indexOf('@') !== -1) out = out.replace(EMAIL, REDACTED);

  if (HAS_DIGIT.test(out)) {
    if (HAS_DECIMAL.test(out)) {
      out = out
        .replace(GPS_LABELLED_SINGLE, `$1$2${REDACTED}`)
        .replace(GPS_LABELLED_PAIR, KEEP_LABEL)
        .replace(GPS_BARE_PAIR, REDACTED);
    }
    if (HAS_DIGIT_RUN.test(out)) {
      out = out
        .replace(AADHAAR_LABELLED, KEEP_LABEL)
        .replace(AADHAAR_GROUPED, REDACTED)
        .replace(PAN, REDACTED)
        .replace(ID_LABELLED, labelledId)
        .replace(OTP_LABELLED, `$1$2${REDACTED}`)
        .replace(OTP_TRAILING, `${REDACTED}$1`)
        .replace(PHONE_LABELLED, labelledPhone)
        .replace(MOBILE, mobile);
    }
  }

  if (HAS_LABEL_SEP.test(out)) out = out.replace(ADDRESS_LABELLED, labelledAddress);

  out = redactNames(out);

  if (out !== text && out.indexOf(REDACTED) !== out.lastIndexOf(REDACTED)) {
    out = out.replace(ADJACENT_REDACTIONS, REDACTED);
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
