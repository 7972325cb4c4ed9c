/**
 * The inputs of the tracking page's rendering (issue 42; contracts.md "Tracking page"). The routes
 * build these from a watch, its latest record and the key's branding; rendering only reads them.
 */
import type { TrackingRecord } from '../schemas/index.ts';

/** The page's languages, each with a catalogue in messages/ (README: how to add one). */
export const LANGS = ['en', 'hi', 'ta', 'bn'] as const;
export type Lang = (typeof LANGS)[number];

export function isLang(value: string): value is Lang {
  return (LANGS as readonly string[]).includes(value);
}

/**
 * The key's branding (`PUT /v1/branding`), already validated by the branding route. The logo is
 * not here: the page shows it from the render input's `logoUrl` (served apart, not inlined).
 */
export interface PageBranding {
  /** The shop's name; '' means none (the page then says "Track your parcel"). */
  name: string;
  /** `#rrggbb`, used only where it keeps WCAG contrast (colors.ts). */
  accent_color: string | null;
  /** An https URL on the shop's side. */
  support_url: string | null;
  /** Show only the AWB's last four characters. */
  mask_awb: boolean;
}

/** The branding of a key that set none: a neutral page. */
export const DEFAULT_BRANDING: PageBranding = { name: '', accent_color: null, support_url: null, mask_awb: false };

/** One watched parcel as the page shows it. */
export type PageShipment = PageParcel & (
  /** The watch's latest record, already redacted (lib/redact): its texts are safe to show. */
  | { record: TrackingRecord }
  /**
   * No record yet: the carrier has no scan of the watched number (a shop often sends the link at
   * booking). The page says it waits for the courier's first update and shows what the shop sent.
   */
  | { record: null; carrier: string; awb: string }
);

/** A watched parcel the carrier has scanned. */
export type ScannedShipment = PageParcel & { record: TrackingRecord };

/** What the page knows of a watched parcel beside its record. */
export interface PageParcel {
  /** The watch's promise is at risk (contracts.md "A shop's promise"). */
  running_late: boolean;
  /** The watch's `promised_by` (an IST day, YYYY-MM-DD), if the shop promised one. */
  promised_by: string | null;
  /** The carrier's display name (config/carriers.yaml `name`); the slug when absent. */
  carrier_name?: string | null;
  /** This parcel's own page (`/t/<token>`), linked from the order page when given. */
  page_url?: string | null;
}
