import { z } from 'zod';
import { MAX_FRAME_ANCESTORS, MAX_NAME_LENGTH, type BrandingDoc } from './doc.ts';
import { checkLogo } from './logo.ts';
import { checkFrameAncestor } from './origins.ts';

type Checked<T> = { value: T } | { problem: string };

/** A surrogate half without its other half: JSON can carry one (`"\ud800"`), no text can. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/**
 * Control characters and the line and paragraph separators would break the page's layout; the bidi
 * embedding and isolate controls could make the name read as another shop's. Joiners (ZWJ, ZWNJ)
 * stay: Hindi, Bengali and Tamil names need them.
 */
const UNWANTED_IN_NAME = /[\p{Cc}\p{Zl}\p{Zp}\u202A-\u202E\u2066-\u2069]/u;

export function checkName(raw: string): Checked<string> {
  const name = raw.trim();
  if (LONE_SURROGATE.test(name)) return { problem: 'not valid Unicode (a lone surrogate)' };
  if (UNWANTED_IN_NAME.test(name)) return { problem: 'control characters, line breaks and direction overrides are not accepted' };
  const length = [...name].length;
  if (length === 0) return { problem: `must not be empty: the shop's name, 1 to ${MAX_NAME_LENGTH} characters` };
  if (length > MAX_NAME_LENGTH) return { problem: `${length} characters; at most ${MAX_NAME_LENGTH}` };
  return { value: name };
}

export function checkAccentColor(raw: string): Checked<string> {
  return /^#[0-9a-f]{6}$/i.test(raw) ? { value: raw.toLowerCase() } : { problem: 'must be #rrggbb (six hexadecimal digits, e.g. #1a73e8) or null' };
}

/** Long enough for any real help page; short of filling the page's header. */
const MAX_SUPPORT_URL_LENGTH = 2_048;

export function checkSupportUrl(raw: string): Checked<string> {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return { problem: 'must be an https URL (e.g. https://shop.example.com/help) or null' };
  }
  if (url.protocol !== 'https:') return { problem: 'must be an https URL (e.g. https://shop.example.com/help) or null' };
  if (url.username || url.password) return { problem: 'must not carry a user name or password' };
  if (url.href.length > MAX_SUPPORT_URL_LENGTH) return { problem: `at most ${MAX_SUPPORT_URL_LENGTH.toLocaleString('en-US')} characters` };
  return { value: url.href };
}

/** A zod transform from one of the checks above: its problem becomes the field's issue. */
const by = <T>(check: (raw: string) => Checked<T>) => (raw: string, ctx: z.RefinementCtx<string>): T => {
  const result = check(raw);
  if ('problem' in result) {
    ctx.issues.push({ code: 'custom', message: result.problem, input: raw });
    return z.NEVER;
  }
  return result.value;
};

/** Type errors say what the field holds; a missing name says it is required. */
const typeError = (expected: string) => ({
  error: (issue: { input?: unknown }) => (issue.input === undefined ? `required: ${expected}` : `must be ${expected}`),
});

/**
 * The body of `PUT /v1/branding` (contracts.md "Tracking page"). A PUT sets the whole branding: a
 * field left out takes its default (null, false, no origins). Unknown fields are refused, so a
 * misspelt one (`accentColor`) is not silently ignored.
 */
export const BrandingInputSchema = z.strictObject({
  name: z.string(typeError(`the shop's name, text of 1 to ${MAX_NAME_LENGTH} characters`)).transform(by(checkName))
    .describe(`The shop's name: 1 to ${MAX_NAME_LENGTH} characters once trimmed, no control characters`),
  accent_color: z.string(typeError('#rrggbb or null')).transform(by(checkAccentColor)).nullable().default(null)
    .describe('#rrggbb (e.g. #1a73e8); null or left out: the page\'s own colour'),
  logo: z.string(typeError('a data: URL (PNG or JPEG, base64) or null')).transform(by(checkLogo)).nullable().default(null)
    .describe('data:image/png;base64,… or data:image/jpeg;base64,…, at most 51,200 bytes decoded, the bytes of that type. '
      + 'No SVG, no other type, no remote URL (the image is stored with the branding)'),
  support_url: z.string(typeError('an https URL or null')).transform(by(checkSupportUrl)).nullable().default(null)
    .describe('An https URL the page links to for help; null or left out: none'),
  mask_awb: z.boolean(typeError('true or false')).default(false)
    .describe('true: the page shows only the AWB\'s last 4 characters (default false)'),
  frame_ancestors: z.array(z.string(typeError('an origin such as https://shop.example.com')).transform(by(checkFrameAncestor)),
    typeError(`a list of at most ${MAX_FRAME_ANCESTORS} origins`))
    .max(MAX_FRAME_ANCESTORS, `at most ${MAX_FRAME_ANCESTORS} origins`)
    .default(() => [])
    .describe(`Up to ${MAX_FRAME_ANCESTORS} origins (https://host[:port]; http://localhost[:port] and http://127.0.0.1[:port] for trying it out) `
      + 'that may show the page in a frame; empty or left out: none may'),
});

const FIELDS = Object.keys(BrandingInputSchema.shape);

/** `frame_ancestors[2]`, `logo`: where a problem is, as a reader writes it. */
const pathOf = (path: readonly PropertyKey[]) => path.map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i ? '.' : ''}${String(p)}`)).join('');

function describe(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') {
    const names = issue.keys.map((k) => JSON.stringify(k.length > 40 ? `${k.slice(0, 40)}…` : k)).join(', ');
    return `${names}: not a branding field (the fields are ${FIELDS.join(', ')})`;
  }
  return `${pathOf(issue.path) || 'the body'}: ${issue.message}`;
}

/**
 * The branding a `PUT /v1/branding` body asks for, checked and normalized, or every problem with
 * it (`field: what is wrong`), in the order of the fields. Pure: nothing is stored here.
 */
export function parseBranding(body: unknown): { ok: true; doc: BrandingDoc } | { ok: false; problems: string[] } {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return { ok: false, problems: ['the body: must be a JSON object, e.g. {"name": "Chai Point", "accent_color": "#1a73e8"}'] };
  }
  const result = BrandingInputSchema.safeParse(body);
  if (result.success) return { ok: true, doc: result.data };
  // One problem per place: a list that is not a list is not also too long.
  const seen = new Set<string>();
  const first = result.error.issues.filter((issue) => {
    const at = issue.code === 'unrecognized_keys' ? `?${issue.keys.join()}` : pathOf(issue.path);
    return !seen.has(at) && Boolean(seen.add(at));
  });
  return { ok: false, problems: first.map(describe) };
}
