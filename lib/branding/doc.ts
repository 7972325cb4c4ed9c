import { z } from 'zod';

/** Longest shop name, in characters (code points) once trimmed (contracts.md "Tracking page"). */
export const MAX_NAME_LENGTH = 60;
/** Largest logo, decoded: small enough to store beside the key and send with every page that shows it. */
export const MAX_LOGO_BYTES = 50 * 1024;
/** Most origins a key may allow to frame its pages. */
export const MAX_FRAME_ANCESTORS = 10;

/**
 * A key's branding as stored and answered (contracts.md "Tracking page"). Every field is already
 * checked and normalized by parseBranding: the page may put them in HTML and headers as they are
 * (escaped by the template as any text is).
 */
export interface BrandingDoc {
  /** The shop's name, trimmed, 1–60 characters. */
  name: string;
  /** `#rrggbb`, lower case; null: the page's own colour. */
  accent_color: string | null;
  /** `data:image/png;base64,…` or `data:image/jpeg;base64,…` whose bytes are that type, ≤ MAX_LOGO_BYTES. */
  logo: string | null;
  /** An https URL (as the URL parser writes it). */
  support_url: string | null;
  /** The page shows the AWB with all but its last 4 characters masked. */
  mask_awb: boolean;
  /** Origins (`https://host[:port]`, as the URL parser writes them) that may frame the page; empty: none may. */
  frame_ancestors: string[];
}

/**
 * What GET /v1/branding answers for a key that never set one: no name (the page shows none), the
 * page's own colour, no logo, no support link, the AWB shown whole, framing refused.
 */
export const DEFAULT_BRANDING: Readonly<Omit<BrandingDoc, 'name' | 'frame_ancestors'> & { name: null; frame_ancestors: readonly string[] }> = Object.freeze({
  name: null, accent_color: null, logo: null, support_url: null, mask_awb: false, frame_ancestors: Object.freeze([]) as readonly string[],
});

/** A key's branding as the API answers it (OpenAPI): a stored doc, or DEFAULT_BRANDING (name null). */
export const BrandingSchema = z.object({
  name: z.string().min(1).max(MAX_NAME_LENGTH).nullable().describe('The shop\'s name (1–60 characters); null: no branding set yet'),
  accent_color: z.string().regex(/^#[0-9a-f]{6}$/).nullable().describe('#rrggbb (lower case); null: the page\'s own colour'),
  logo: z.string().nullable().describe('data:image/png;base64,… or data:image/jpeg;base64,… (at most 51,200 bytes decoded); null: none'),
  support_url: z.string().nullable().describe('An https URL the page links to for help; null: none'),
  mask_awb: z.boolean().describe('true: the page shows only the AWB\'s last 4 characters'),
  frame_ancestors: z.array(z.string()).max(MAX_FRAME_ANCESTORS)
    .describe('Origins that may show the page in a frame (Content-Security-Policy frame-ancestors); empty: none may'),
});
