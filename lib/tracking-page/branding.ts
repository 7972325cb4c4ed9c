/**
 * What of a branding the page may put in its HTML. The branding route validates on the way in; the
 * page checks again because these values land in attributes and a <style> block, where HTML
 * escaping alone does not make a `javascript:` URL or a stray CSS rule harmless. Pure.
 */
import type { PageBranding } from './types.ts';

/** A path on the page's own host, relative to the page (`<token>/logo?v=<hex>`): no scheme, no other host. */
const RELATIVE_PATH = /^[A-Za-z0-9_-]+(?:\/[A-Za-z0-9_-]+)*(?:\?v=[0-9a-f]{1,64})?$/;

/** The logo's URL when it is a path relative to the page, else null (nothing from another host, no data: or script URL). */
export function safeLogoUrl(url: string | null | undefined): string | null {
  return url && RELATIVE_PATH.test(url) ? url : null;
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
