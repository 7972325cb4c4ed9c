/**
 * The tracking page's HTML (issue 42; contracts.md "Tracking page"): a shipment's page, an order's
 * page and the page of a link that is gone. Server-rendered with eta templates (templates/, README:
 * why eta), inline CSS, no script, nothing from another host. The templates are read and compiled
 * once, at import; rendering is then pure.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { Eta } from 'eta';
import { safeHttpsUrl, safeLogoUrl, shopName } from './branding.ts';
import { pageColors } from './colors.ts';
import { t } from './messages.ts';
import { LANGS, type Lang, type PageBranding, type PageShipment } from './types.ts';
import { parcelView } from './view.ts';

const TEMPLATES = new URL('./templates/', import.meta.url);

function loadTemplates(): Eta {
  // autoEscape is eta's default; set here so no one turns it off by accident. rmWhitespace drops
  // the templates' indentation and blank lines: bytes every view would carry.
  const eta = new Eta({ autoEscape: true, rmWhitespace: true, cache: true });
  for (const dir of ['', 'partials/']) {
    for (const file of readdirSync(new URL(dir, TEMPLATES))) {
      if (!file.endsWith('.eta')) continue;
      eta.loadTemplate(`@${file.slice(0, -4)}`, readFileSync(new URL(dir + file, TEMPLATES), 'utf8'));
    }
  }
  return eta;
}

const eta = loadTemplates();

export type SwitchUrl = (lang: Lang) => string;

interface Frame {
  lang: Lang;
  title: string;
  colors: ReturnType<typeof pageColors>;
  brand: { name: string; logo: string | null } | null;
  switcher: { label: string; items: { lang: Lang; name: string; href: string; current: boolean }[] } | null;
  support: { href: string; text: string } | null;
  /** Only pages that show times say which zone they are in. */
  istNote: string | null;
}

function frame(lang: Lang, branding: PageBranding | null, switchUrl: SwitchUrl | null, logoUrl: string | null = null): Frame {
  const name = branding ? shopName(branding) : '';
  const support = branding ? safeHttpsUrl(branding.support_url) : null;
  return {
    lang,
    title: name ? t(lang, 'page.title_shop', { shop: name }) : t(lang, 'page.title'),
    colors: pageColors(branding?.accent_color ?? null),
    brand: branding ? { name: name || t(lang, 'page.title'), logo: safeLogoUrl(logoUrl) } : null,
    switcher: switchUrl
      ? {
        label: t(lang, 'switcher.label'),
        // Each language named in itself: a reader who cannot read the current one still finds theirs.
        items: LANGS.map((l) => ({ lang: l, name: t(l, `lang.${l}`), href: switchUrl(l), current: l === lang })),
      }
      : null,
    support: support ? { href: support, text: name ? t(lang, 'support.link', { shop: name }) : t(lang, 'support.link_plain') } : null,
    istNote: branding ? t(lang, 'page.ist_note') : null,
  };
}

export interface ShipmentPageInput {
  shipment: PageShipment;
  branding: PageBranding;
  lang: Lang;
  nowMs: number;
  switchUrl: SwitchUrl;
  /**
   * Where the page loads the shop's logo from: a path relative to the page on its own host (the
   * routes serve it at `<token>/logo`), so the logo's bytes are not in every view. Null or absent:
   * no logo shown.
   */
  logoUrl?: string | null;
}

export function renderShipmentPage({ shipment, branding, lang, nowMs, switchUrl, logoUrl }: ShipmentPageInput): string {
  const p = parcelView(lang, shipment, branding.mask_awb, nowMs);
  return eta.render('@shipment', { ...frame(lang, branding, switchUrl, logoUrl), p, id: 's' });
}

export interface OrderPageInput {
  orderId: string;
  shipments: PageShipment[];
  branding: PageBranding;
  lang: Lang;
  nowMs: number;
  switchUrl: SwitchUrl;
  /** As ShipmentPageInput's. */
  logoUrl?: string | null;
}

export function renderOrderPage({ orderId, shipments, branding, lang, nowMs, switchUrl, logoUrl }: OrderPageInput): string {
  const total = shipments.length;
  return eta.render('@order', {
    ...frame(lang, branding, switchUrl, logoUrl),
    heading: t(lang, 'order.heading', { order: orderId }),
    count: t(lang, 'order.count', { count: total }),
    parcels: shipments.map((s) => parcelView(lang, s, branding.mask_awb, nowMs)),
    parcelTitles: shipments.map((_, i) => t(lang, 'order.parcel', { n: i + 1, total })),
  });
}

/** A token that never was, was revoked or has expired: the same page, so none can be told apart. */
export function renderGonePage({ lang }: { lang: Lang }): string {
  return eta.render('@gone', { ...frame(lang, null, null), heading: t(lang, 'gone.title'), text: t(lang, 'gone.body') });
}
