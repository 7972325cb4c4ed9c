import {
  FILLERS,
  HONORIFICS,
  NAME_SEPARATOR,
  NAME_TRIGGER,
  NAME_WORD,
  PLACES,
  REDACTED,
  ROLES,
  STAFF_FOLLOWED_BY_PHONE,
  STOPWORDS,
} from './patterns.ts';

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
  /** lower-cased, possessive "'s" removed */
  key: string;
}

const MAX_WORDS = 12;
const MAX_NAME_WORDS = 6;
const MAX_STAFF_NAME_WORDS = 4;

function isBlank(code: number): boolean {
  return code === 32 /* ' ' */ || code === 9 /* \t */ || code === 160 /* nbsp */;
}

function isLetterStart(text: string, i: number): boolean {
  NAME_WORD.lastIndex = i;
  return NAME_WORD.test(text);
}

/** Splits the name slot starting at `pos` into words, stopping at punctuation, digits or line ends. */
function readWords(text: string, pos: number): Word[] {
  const out: Word[] = [];
  let p = pos;
  while (out.length < MAX_WORDS) {
    while (p < text.length && isBlank(text.charCodeAt(p))) p++;
    NAME_WORD.lastIndex = p;
    const m = NAME_WORD.exec(text);
    if (m === null) break;
    const start = p;
    let end = NAME_WORD.lastIndex;
    let key = m[0].toLowerCase();
    if (key.endsWith("'s") || key.endsWith('’s')) key = key.slice(0, -2);
    let endsName = false;
    let tookDot = false;
    if (text.charCodeAt(end) === 46 /* . */) {
      // "MR." / "A." keep going ("MR. A K SHARMA", "A.K.Sharma"); "Kumar." ends the name.
      if (HONORIFICS.has(key) || key.length === 1) {
        end++;
        tookDot = true;
      } else {
        endsName = true;
      }
    }
    out.push({ start, end, key });
    p = end;
    if (endsName || p >= text.length) break;
    const next = text.charCodeAt(p);
    if (isBlank(next)) continue;
    if (tookDot && isLetterStart(text, p)) continue;
    break; // punctuation, digit, bracket, line break …
  }
  return out;
}

const isRole = (w: Word | undefined): boolean => w !== undefined && ROLES.has(w.key);

/**
 * Span [start, end) of the person's name in the slot after a trigger ending at `pos`, or null
 * when the slot holds no name (only role words, a place/organisation, a stop word, nothing).
 */
function nameSpan(text: string, pos: number, kind: Kind): [number, number] | null {
  NAME_SEPARATOR.lastIndex = pos;
  const sep = NAME_SEPARATOR.exec(text);
  const labelled = sep !== null && sep[1] !== undefined;
  if (kind === LABEL && !labelled) return null;
  const slotStart = sep === null ? pos : NAME_SEPARATOR.lastIndex;

  const ws = readWords(text, slotStart);
  const n = ws.length;
  let i = 0;
  // Leading role words and fillers: "the customer", "his brother", "security guard", "office boy".
  while (i < n) {
    const w = ws[i] as Word;
    const next = ws[i + 1];
    if (FILLERS.has(w.key) || ROLES.has(w.key)) {
      i++;
    } else if (w.key === 'a' && next !== undefined && (ROLES.has(next.key) || PLACES.has(next.key))) {
      i++;
    } else if (PLACES.has(w.key) && isRole(next)) {
      i += 2;
    } else {
      break;
    }
  }
  const first = i;
  const limit = kind === STAFF ? MAX_STAFF_NAME_WORDS : MAX_NAME_WORDS;
  while (i < n && i - first < limit) {
    const w = ws[i] as Word;
    if (STOPWORDS.has(w.key) || ROLES.has(w.key) || FILLERS.has(w.key)) break;
    if (PLACES.has(w.key)) {
      if (isRole(ws[i + 1])) break; // "Ramesh office boy"
      return null; // "Bengaluru hub", "Delhivery", "India Post": not a person
    }
    i++;
  }
  if (i === first) return null;
  const start = (ws[first] as Word).start;
  const end = (ws[i - 1] as Word).end;
  if (kind === STAFF && !labelled) {
    STAFF_FOLLOWED_BY_PHONE.lastIndex = end;
    if (!STAFF_FOLLOWED_BY_PHONE.test(text)) return null;
  }
  return [start, end];
}

/** True when the bare label "name" is preceded by a word ("Hub Name:"), i.e. not a person's name. */
function precededByWord(text: string, index: number): boolean {
  let p = index - 1;
  while (p >= 0 && isBlank(text.charCodeAt(p))) p--;
  if (p < 0) return false;
  const c = text.charCodeAt(p);
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

/** Replaces names after trigger phrases with REDACTED. Returns `text` itself when nothing changed. */
export function redactNames(text: string): string {
  const re = NAME_TRIGGER;
  re.lastIndex = 0;
  let out = '';
  let last = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    const kind = m[1] !== undefined ? PHRASE : m[2] !== undefined ? LABEL : STAFF;
    if (kind === LABEL && m[0].length === 4 && precededByWord(text, m.index)) continue;
    const span = nameSpan(text, m.index + m[0].length, kind);
    if (span === null) continue;
    out += text.slice(last, span[0]) + REDACTED;
    last = span[1];
    re.lastIndex = span[1];
  }
  return last === 0 ? text : out + text.slice(last);
}
