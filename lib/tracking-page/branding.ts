/**
 * What of a branding the page may put in its HTML. The branding route validates on the way in; the
 * page checks again because these values land in attributes and a <style> block, where HTML
 * escaping alone does not make a `javascript:` URL or a stray CSS rule harmless. Pure.
 */
import type { PageBranding } from './types.ts';

const DATA_IMAGE = /^data:image\/(?:png|jpeg);base64,[A-Za-z0-9+/]+={0,2}$/;

/** The logo as a data: URL of a PNG or JPEG, else null (nothing from another host, no SVG). */
export function safeLogo(logo: string | null): string | null {
  return logo !== null && DATA_IMAGE.test(logo) ? logo : null;
}

/** An https URL, else null. */
export function safeHttpsUrl(url: string | null | undefined): string | null {
  if (!url) return null;
  try {
    return new URL(url).protocol === 'https:' ? url : null;
  } catch {
    return null;
  }
}

/** The shop's name, trimmed; '' when it has none. */
export function shopName(branding: PageBranding): string {
  return branding.name.trim();
}

export interface ShownAwb {
  /** What the page prints. */
  text: string;
  /** The last four characters when masked (for the screen-reader words), else null. */
  last4: string | null;
}

/** The AWB as the page prints it: `••••••7890` when the shop masks it. */
export function shownAwb(awb: string, mask: boolean): ShownAwb {
  if (!mask) return { text: awb, last4: null };
  const last4 = awb.slice(-4);
  return { text: '•'.repeat(Math.max(2, Math.min(6, awb.length - 4))) + last4, last4 };
}
