/**
 * Delivery staff written the way couriers write their executives: a route or employee code, a
 * hyphen, the name, then a phone field ("Out for delivery: 383439-Nandinayani Reddy Bhaskara Sitics
 * Logistics (356231)…, MobileNo:- 9963133564" in a real Xpressbees text relayed by Shiprocket;
 * "PNQ-112 - Santosh Jadhav - 98…", "DLV123-Suresh Kumar-Mob 98…", "EMP 4521 - R. Srinivasan - Ph:
 * 98…"). No trigger phrase precedes the name, so the trigger-based reader (names.ts) misses it; the
 * code before and the phone field after are what mark the words between as a person. The code is
 * kept (a route or employee number says nothing of a person without the name), the name goes.
 */
import { PLACES, REDACTED, ROLES, STOPWORDS } from './patterns.ts';

/**
 * A code and its hyphen: digits with an optional letter prefix ("383439", "DLV123", "EMP 4521"), or
 * letter groups ending in digits ("PNQ-112", "LKO-DB-77"); then a hyphen before a letter.
 */
const CODE_THEN_HYPHEN = /(?<![A-Za-z0-9])(?:[A-Za-z]{1,6}[ ]?\d{2,10}|\d{3,10}|[A-Za-z]{2,6}(?:-[A-Za-z]{1,4})*-\d{1,6})[ \t]*-[ \t]*(?=[A-Za-z])/g;

/** A name word: letters (an initial may carry a dot, names an apostrophe). */
const NAME_WORD = /[A-Za-z][A-Za-z']*\.?/y;
const GAP = /[ \t]+/y;

/** What may follow the name for it to be staff: a phone label, a number, or a phone already redacted. */
const PHONE_FIELD = /\[redacted\]|(?<![A-Za-z])(?:mob(?:ile)?(?:\s*no)?|ph(?:one)?|contact|cell|tel)(?![a-z])|\+?\d[\d \t-]{7,}\d/i;
/** How far after the name the phone field may start (agency names and ids sit in between). */
const PHONE_WINDOW = 100;
const MAX_NAME_WORDS = 6;
/** A name ends where a field does: a separator, or the text's end ("… Reddy (356231)", "… Kumar-Mob"). */
const FIELD_END = /[ \t]*(?:[-,(:|/]|$)/y;

/** The end of the name words starting at `from`, or -1 when the first word is not a name's. */
function nameEnd(text: string, from: number): number {
  let end = -1;
  let at = from;
  for (let words = 0; words < MAX_NAME_WORDS; words++) {
    NAME_WORD.lastIndex = at;
    const word = NAME_WORD.exec(text);
    if (!word) break;
    const lower = word[0].replace(/\.$/, '').toLowerCase();
    // "Out for delivery", "Hub", "Mob": the first word must read as a name; later ones end the name.
    if (STOPWORDS.has(lower) || ROLES.has(lower) || (words === 0 && PLACES.has(lower))) break;
    end = at + word[0].length;
    GAP.lastIndex = end;
    if (!GAP.exec(text)) break;
    at = GAP.lastIndex;
  }
  return end;
}

/** The text with the names between a staff code and a phone field replaced by the redaction mark. */
export function redactCodedStaff(text: string): string {
  // Most texts carry no phone field at all: one test spares them the code scan.
  if (!PHONE_FIELD.test(text)) return text;
  let out = '';
  let copied = 0;
  for (const code of text.matchAll(CODE_THEN_HYPHEN)) {
    const start = code.index + code[0].length;
    if (start < copied) continue;
    const end = nameEnd(text, start);
    if (end === -1) continue;
    // Prose ("Delayed due to rain, call …") runs on past its words; a name field stops at a separator.
    FIELD_END.lastIndex = end;
    if (!FIELD_END.test(text)) continue;
    if (!PHONE_FIELD.test(text.slice(end, end + PHONE_WINDOW))) continue;
    out += text.slice(copied, start) + REDACTED;
    copied = end;
  }
  return copied === 0 ? text : out + text.slice(copied);
}
