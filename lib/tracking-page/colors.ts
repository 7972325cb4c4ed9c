/**
 * The shop's accent colour, kept only where people can still read it: WCAG 2.2 asks 4.5:1 for text
 * (links, 1.4.3) and 3:1 for graphics (the progress bar and box edges, 1.4.11). The page has a light
 * and a dark scheme, so each use is checked against that scheme's backgrounds; below the ratio the
 * page's default colour takes its place. Pure.
 */

/** The backgrounds text and lines sit on: the page and the boxes (light, then dark scheme). */
export const SCHEMES = {
  light: { bg: '#ffffff', card: '#f4f5f7', accent: '#0b57b3' },
  dark: { bg: '#111418', card: '#1d2229', accent: '#8ab4f8' },
} as const;

export const TEXT_CONTRAST = 4.5;
export const GRAPHIC_CONTRAST = 3;

const HEX = /^#[0-9a-f]{6}$/i;

function channel(hex: string, at: number): number {
  const c = parseInt(hex.slice(at, at + 2), 16) / 255;
  return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
}

/** WCAG relative luminance of `#rrggbb`. */
export function luminance(hex: string): number {
  return 0.2126 * channel(hex, 1) + 0.7152 * channel(hex, 3) + 0.0722 * channel(hex, 5);
}

/** WCAG contrast ratio of two `#rrggbb` colours, 1 to 21. */
export function contrast(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

export interface SchemeColors {
  /** Links and other accent text. */
  text: string;
  /** The progress bar, the top rule and box edges. */
  line: string;
}

export interface PageColors {
  light: SchemeColors;
  dark: SchemeColors;
}

function pick(accent: string | null, scheme: (typeof SCHEMES)[keyof typeof SCHEMES], ratio: number): string {
  if (accent === null) return scheme.accent;
  const worst = Math.min(contrast(accent, scheme.bg), contrast(accent, scheme.card));
  return worst >= ratio ? accent.toLowerCase() : scheme.accent;
}

/** The colours of both schemes; an accent that is not `#rrggbb` counts as none (it goes inside <style>). */
export function pageColors(accentColor: string | null): PageColors {
  const accent = accentColor !== null && HEX.test(accentColor) ? accentColor : null;
  return {
    light: { text: pick(accent, SCHEMES.light, TEXT_CONTRAST), line: pick(accent, SCHEMES.light, GRAPHIC_CONTRAST) },
    dark: { text: pick(accent, SCHEMES.dark, TEXT_CONTRAST), line: pick(accent, SCHEMES.dark, GRAPHIC_CONTRAST) },
  };
}
