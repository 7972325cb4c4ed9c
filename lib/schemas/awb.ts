/**
 * The consignment number (AWB), read once (decisions.md "Consignment number"): trimmed, 4 to 40
 * characters of [A-Za-z0-9-], then upper case, the form it is cached, polled, stored and echoed in
 * (decisions.md: "Stored and echoed uppercased"; "Cache": "uppercased AWB"). Every rule about an
 * AWB's text lives in this module; the rest of the product takes an `Awb` and never trims,
 * uppercases or length-checks one.
 */
import { z } from 'zod';

/**
 * A number that went through `parseAwb`: canonical (trimmed, upper case) and valid. Only this module
 * makes one, so a function taking an `Awb` cannot be handed text nobody checked.
 */
export type Awb = string & { readonly __brand: 'Awb' };

export const AWB_MIN_LENGTH = 4;
export const AWB_MAX_LENGTH = 40;

/** The rule in words, for the 400 `invalid_awb` messages. */
export const AWB_RULE = `${AWB_MIN_LENGTH} to ${AWB_MAX_LENGTH} letters, digits or dashes`;

// Tested before upper-casing: 'ß' upper-cases to 'SS' and 'ﬀ' to 'FF', which would pass.
const AWB_PATTERN = new RegExp(`^[A-Za-z0-9-]{${AWB_MIN_LENGTH},${AWB_MAX_LENGTH}}$`);

/** The text the parser reads: a string trimmed, anything else empty. Shown back for a refused row. */
export function awbText(raw: unknown): string {
  return typeof raw === 'string' ? raw.trim() : '';
}

/** The one parser: the canonical number, or null when `raw` is not one (the caller's 400). */
export function parseAwb(raw: unknown): Awb | null {
  const text = awbText(raw);
  return AWB_PATTERN.test(text) ? (text.toUpperCase() as Awb) : null;
}

/** `parseAwb` for numbers that must be valid (configuration, the carrier poll's entry): throws otherwise. */
export function requireAwb(raw: unknown): Awb {
  const awb = parseAwb(raw);
  if (awb === null) throw new TypeError(`a consignment number is ${AWB_RULE}, got ${JSON.stringify(awbText(raw).slice(0, 60))}`);
  return awb;
}

/**
 * A number written in configuration (a carrier's example and sample numbers) exactly as the parser
 * writes it: a padded or lower-case one is a configuration error, not quietly rewritten.
 */
export const CanonicalAwbSchema = z.string().transform((text, ctx) => {
  const awb = parseAwb(text);
  if (awb === null || awb !== text) {
    ctx.addIssue({ code: 'custom', message: `a consignment number as the product writes it: ${AWB_RULE}, upper case` });
    return z.NEVER;
  }
  return awb;
});

/**
 * The canonical form of a number read back from storage (a stored poll, an event row), written
 * canonical but not checked again: stored history is read as it is, never refused.
 */
export function storedAwb(text: string): string {
  return text.trim().toUpperCase();
}

/**
 * Whether a carrier's echo of the number (in its answer, often padded or in another case) names
 * `awb`. The echo is the carrier's text, compared in the canonical form, not checked.
 */
export function isEchoOf(echo: string | null | undefined, awb: Awb): boolean {
  return typeof echo === 'string' && storedAwb(echo) === awb;
}
