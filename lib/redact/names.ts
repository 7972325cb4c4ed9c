/**
 * Names of consignees and delivery staff. A trigger phrase ("received by", "delivered to",
 * "Receiver:", "Agent …") opens a name slot; the slot is read word by word with plain character
 * checks (no regex per word) and classified with the word lists of patterns.ts.
 */
import * as patterns from './patterns.ts';

// Local copies: a hot loop reading imported bindings can go through module-namespace getters
// (esbuild/tsx CJS interop); reading module-level constants does not.
const {
  FILLERS,
  HONORIFICS,
  NAME_TRIGGER,
  PLACES,
  REDACTED,
  ROLES,
  STAFF_FOLLOWED_BY_PHONE,
  STOPWORDS,
} = patterns;

/**
 * Trigger kinds, matching the capture groups of NAME_TRIGGER:
 * PHRASE "received by", "delivered to", … always introduce a person;
 * LABEL "Receiver:", "Relation -" only with an explicit separator;
 * STAFF "Agent", "delivery boy" only with a separator or a phone right after the name.
 */
const PHRASE = 1;
const LABEL = 2;
const STAFF = 3;
type Kind = typeof PHRASE | typeof LABEL | typeof STAFF;

interface Word {
  start: number;
  end: number;
  /** word-class bits (below) of the lower-cased word, possessive "'s" removed */
  cls: number;
}

const STOP = 1;
const ROLE = 2;
const PLACE = 4;
const FILLER = 8;
const HONORIFIC = 16;
const ARTICLE_A = 32;
const INITIAL = 64;
const NAME_LABEL = 128;
const NOT_NAME = STOP | ROLE | PLACE | FILLER;

/** One lookup per word instead of one per list. */
const WORD_CLASS: ReadonlyMap<string, number> = (() => {
  const map = new Map<string, number>();
  const add = (set: ReadonlySet<string>, bit: number): void => {
    for (const w of set) map.set(w, (map.get(w) ?? 0) | bit);
  };
  add(STOPWORDS, STOP);
  add(ROLES, ROLE);
  add(PLACES, PLACE);
  add(FILLERS, FILLER);
  add(HONORIFICS, HONORIFIC);
  map.set('a', (map.get('a') ?? 0) | ARTICLE_A);
  for (const w of ['name', 'named', 'namely']) map.set(w, (map.get(w) ?? 0) | NAME_LABEL);
  return map;
})();

function wordClass(text: string, start: number, end: number): number {
  if (end - start === 1) return INITIAL | (WORD_CLASS.get(text[start]!.toLowerCase()) ?? 0);
  let key = text.slice(start, end).toLowerCase();
  if (key.endsWith("'s") || key.endsWith('’s')) key = key.slice(0, -2);
  return WORD_CLASS.get(key) ?? 0;
}

const MAX_WORDS = 12;
const MAX_NAME_WORDS = 6;
const MAX_STAFF_NAME_WORDS = 4;
const MAX_WORDS_BEFORE_PHONE = 3;

const NON_ASCII_LETTER = /[\p{L}\p{M}]/u;
const NON_ASCII_UPPER = /\p{Lu}/u;

function isBlank(code: number): boolean {
  return code === 32 /* ' ' */ || code === 9 /* \t */ || code === 160 /* nbsp */;
}

function isLetter(code: number): boolean {
  if (code < 128) return (code >= 97 && code <= 122) || (code >= 65 && code <= 90);
  return NON_ASCII_LETTER.test(String.fromCharCode(code));
}

/** Inner-word joiners: "D'Souza", "Ram-Kumar". */
function isJoiner(code: number): boolean {
  return code === 39 /* ' */ || code === 0x2019 /* ’ */ || code === 45 /* - */;
}

function isUpper(code: number): boolean {
  if (code < 128) return code >= 65 && code <= 90;
  return NON_ASCII_UPPER.test(String.fromCharCode(code));
}

/** End of the word starting at `p` (a letter), or `p` when there is none. */
function wordEnd(text: string, p: number): number {
  const len = text.length;
  if (p >= len || !isLetter(text.charCodeAt(p))) return p;
  p++;
  while (p < len) {
    const c = text.charCodeAt(p);
    if (isLetter(c)) p++;
    else if (isJoiner(c) && p + 1 < len && isLetter(text.charCodeAt(p + 1))) p += 2;
    else break;
  }
  return p;
}

/** Splits the name slot starting at `pos` into words, stopping at punctuation, digits or line ends. */
function readWords(text: string, pos: number): Word[] {
  const out: Word[] = [];
  const len = text.length;
  let p = pos;
  while (out.length < MAX_WORDS) {
    while (p < len && isBlank(text.charCodeAt(p))) p++;
    const start = p;
    let end = wordEnd(text, p);
    if (end === start) break;
    // "Suresh S/O Mahesh": the "S" of "S/O" is a relation marker, not an initial.
    if (end - start === 1 && text.charCodeAt(end) === 47 /* / */) break;
    const cls = wordClass(text, start, end);
    let endsName = false;
    let tookDot = false;
    if (text.charCodeAt(end) === 46 /* . */) {
      // "MR. A K SHARMA", "A.K.Sharma" go on; "Kumar." ends the name.
      if ((cls & (HONORIFIC | INITIAL)) !== 0) {
        end++;
        tookDot = true;
      } else {
        endsName = true;
      }
    }
    out.push({ start, end, cls });
    p = end;
    if (endsName || p >= len) break;
    const next = text.charCodeAt(p);
    if (isBlank(next)) continue;
    if (tookDot && isLetter(next)) continue;
    break; // punctuation, digit, bracket, line break …
  }
  return out;
}

/** Skips the separator after a trigger (blanks, then one of ':' ':-' '=' '-' '#'). */
function skipSeparator(text: string, pos: number): { pos: number; labelled: boolean } {
  const len = text.length;
  let p = pos;
  while (p < len && isBlank(text.charCodeAt(p))) p++;
  const c = text.charCodeAt(p);
  let labelled = false;
  if (c === 58 /* : */ || c === 61 /* = */) {
    labelled = true;
    p++;
    if (text.charCodeAt(p) === 45 /* - */) p++;
  } else if (c === 45 /* - */ || c === 35 /* # */) {
    labelled = true;
    p++;
  }
  while (p < len && isBlank(text.charCodeAt(p))) p++;
  return { pos: p, labelled };
}

const isRole = (w: Word | undefined): boolean => w !== undefined && (w.cls & ROLE) !== 0;

/**
 * End of a slot made only of role words ("consignee", "security guard") as left by the last
 * nameSpan call that returned null, else -1. Lets "Delivered to neighbour (Mr. Gupta)" look at the
 * bracket after the role.
 */
let rolesOnlyEnd = -1;

/**
 * Span [start, end) of the person's name in the slot after a trigger ending at `pos`, or null
 * when the slot holds no name (only role words, a place/organisation, a stop word, nothing).
 */
function nameSpan(text: string, pos: number, kind: Kind): [number, number] | null {
  rolesOnlyEnd = -1;
  const sep = skipSeparator(text, pos);
  if (kind === LABEL && !sep.labelled) return null;

  const ws = readWords(text, sep.pos);
  const n = ws.length;
  let i = 0;
  // Leading role words and fillers: "the customer", "his brother", "security guard", "office boy".
  while (i < n) {
    const w = ws[i] as Word;
    const next = ws[i + 1];
    if ((w.cls & (FILLER | ROLE)) !== 0) {
      i++;
    } else if ((w.cls & ARTICLE_A) !== 0 && next !== undefined && (next.cls & (ROLE | PLACE)) !== 0) {
      i++;
    } else if ((w.cls & PLACE) !== 0 && isRole(next)) {
      i += 2;
    } else if ((w.cls & NAME_LABEL) !== 0 && i > 0) {
      i++; // "security guard name Ramesh"
    } else {
      break;
    }
  }
  const first = i;
  if (first === n) {
    if (n > 0) rolesOnlyEnd = (ws[n - 1] as Word).end;
    return null;
  }
  const limit = kind === STAFF ? MAX_STAFF_NAME_WORDS : MAX_NAME_WORDS;
  while (i < n && i - first < limit) {
    const w = ws[i] as Word;
    if ((w.cls & (STOP | ROLE | FILLER)) !== 0) break;
    if ((w.cls & PLACE) !== 0) {
      if (isRole(ws[i + 1])) break; // "Ramesh office boy"
      return null; // "Bengaluru hub", "Delhivery", "India Post": not a person
    }
    i++;
  }
  if (i === first) return null;
  const start = (ws[first] as Word).start;
  const end = (ws[i - 1] as Word).end;
  if (kind === STAFF && !sep.labelled) {
    STAFF_FOLLOWED_BY_PHONE.lastIndex = end;
    if (!STAFF_FOLLOWED_BY_PHONE.test(text)) return null;
  }
  return [start, end];
}

/** True when the bare label "name" is preceded by a non-role word ("Hub Name:"): not a person's name. */
function precededByWord(text: string, index: number): boolean {
  let p = index - 1;
  while (p >= 0 && isBlank(text.charCodeAt(p))) p--;
  if (p < 0 || !isLetter(text.charCodeAt(p))) return false;
  const end = p + 1;
  while (p >= 0 && isLetter(text.charCodeAt(p))) p--;
  // "FE Name:", "Customer Name:" are people; "Hub Name:", "Product Name:" are not.
  return (wordClass(text, p + 1, end) & ROLE) === 0;
}

/** After a role-only slot: a name in a bracket or after a dash/colon ("neighbour (Mr. Gupta)"). */
function nameAfterRoles(text: string, pos: number): [number, number] | null {
  let p = pos;
  while (p < text.length && isBlank(text.charCodeAt(p))) p++;
  const c = text.charCodeAt(p);
  if (c !== 40 /* ( */ && c !== 45 /* - */ && c !== 58 /* : */) return null;
  return nameSpan(text, p + 1, PHRASE);
}

/** Replaces names after trigger phrases with REDACTED. Returns `text` itself when nothing changed. */
export function redactNames(text: string): string {
  const re = NAME_TRIGGER;
  re.lastIndex = 0;
  let out = '';
  let last = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    const kind: Kind = m[1] !== undefined ? PHRASE : m[2] !== undefined ? LABEL : STAFF;
    if (kind === LABEL && m[0].length === 4 && precededByWord(text, m.index)) continue;
    let span = nameSpan(text, m.index + m[0].length, kind);
    if (span === null && rolesOnlyEnd !== -1 && kind !== STAFF) span = nameAfterRoles(text, rolesOnlyEnd);
    if (span === null) continue;
    out += text.slice(last, span[0]) + REDACTED;
    last = span[1];
    re.lastIndex = span[1];
  }
  return last === 0 ? text : out + text.slice(last);
}

/**
 * For a phone number starting at `index`: the span [start, end) of a capitalised name written right
 * before it ("Out for Delivery - Suresh Kumar (98765 43210)", "Agent Suresh 9876543210"), or null.
 * Stop/role/place words end the name ("consignee 98…", "Ph 98…"); nothing before `floor` is touched.
 */
export function nameBefore(text: string, index: number, floor: number): [number, number] | null {
  let p = index - 1;
  while (p >= floor && isBlank(text.charCodeAt(p))) p--;
  const c = text.charCodeAt(p);
  if (p >= floor && (c === 40 /* ( */ || c === 45 /* - */ || c === 58 /* : */)) {
    p--;
    while (p >= floor && isBlank(text.charCodeAt(p))) p--;
  }
  const end = p + 1;
  let start = -1;
  for (let count = 0; count < MAX_WORDS_BEFORE_PHONE; count++) {
    const wEnd = p + 1;
    while (p >= floor && (isLetter(text.charCodeAt(p)) || isJoiner(text.charCodeAt(p)))) p--;
    const wStart = p + 1;
    if (wStart === wEnd || !isUpper(text.charCodeAt(wStart))) break;
    if ((wordClass(text, wStart, wEnd) & (NOT_NAME | HONORIFIC)) !== 0) break;
    start = wStart;
    // Only single blanks between the words of a name.
    if (p < floor || !isBlank(text.charCodeAt(p))) break;
    p--;
  }
  return start === -1 ? null : [start, end];
}
