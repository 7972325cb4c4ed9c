/**
 * The rendered pages: the right words for each state in every language (asserted on the
 * catalogues' own words, not snapshots), escaping, the byte budget, and what "built like a fast
 * page" asks of the HTML (noindex, lang, no script, nothing from another host).
 */
import { describe, expect, it } from 'vitest';
import { escapeHtml } from '../html/index.ts';
import { NDR_REASONS } from '../schemas/index.ts';
import { type MessageKey, formatDay, t } from './messages.ts';
import { renderGonePage, renderOrderPage, renderShipmentPage } from './render.ts';
import { BRANDING, NOW_MS, delivered, failedAttempt, longJourney, moving, record, runningLate, switchUrl } from './testutil/records.ts';
import { LANGS, type Lang, type PageBranding, type PageShipment } from './types.ts';

const BUDGET_BYTES = 30 * 1024;

/** The message as the HTML carries it (escaped: a message may hold an apostrophe or &). */
const words = (lang: Lang, key: MessageKey, values?: Record<string, string | number>) => escapeHtml(t(lang, key, values));
const day = (lang: Lang, d: string) => formatDay(lang, d);

/** The logo's address the routes give a page: relative to it, on its own host. */
const LOGO_URL = 'Abc123_-xyz/logo?v=0123456789ab';

function page(shipment: PageShipment, lang: Lang, branding: PageBranding = BRANDING): string {
  return renderShipmentPage({ shipment, branding, lang, nowMs: NOW_MS, switchUrl, logoUrl: LOGO_URL });
}

/** Every URL the page would fetch or link, from src, href and CSS url(). */
function urls(html: string): string[] {
  return [...html.matchAll(/\b(?:src|href)="([^"]*)"|url\(([^)]*)\)/g)].map((m) => m[1] ?? m[2]!);
}

describe.each(LANGS)('the shipment page in %s', (lang) => {
  it('moving with a prediction: status, the promised day and the p90 window in words', () => {
    const html = page(moving(), lang);
    expect(html).toContain(`<h1>${words(lang, 'status.in_transit')}</h1>`);
    expect(html).toContain(words(lang, 'promise.day', { day: day(lang, '2026-11-28') }));
    expect(html).toContain(words(lang, 'window.p90', { date: day(lang, '2026-11-30') }));
    expect(html).not.toContain(words(lang, 'ndr.heading'));
    expect(html).not.toContain('class="box late"');
  });

  it('says "tomorrow" and "today" by the IST calendar', () => {
    const tomorrow = failedAttempt('other');
    expect(page(tomorrow, lang)).toContain(words(lang, 'promise.tomorrow', { day: day(lang, '2026-11-27') }));
    const today = moving();
    today.record.insights.prediction!.delivery_date = '2026-11-26';
    expect(page(today, lang)).toContain(words(lang, 'promise.today'));
  });

  it.each(NDR_REASONS)('a failed attempt (%s): what happened and what the customer can do', (reason) => {
    const html = page(failedAttempt(reason), lang);
    expect(html).toContain(`<h1>${words(lang, 'status.attempt_failed')}</h1>`);
    expect(html).toContain(words(lang, `ndr.${reason}.what`));
    expect(html).toContain(words(lang, `ndr.${reason}.do`));
    expect(html).toContain(words(lang, 'ndr.attempts', { count: 1 }));
  });

  it('running late: the promise broken and the new day', () => {
    const html = page(runningLate(), lang);
    expect(html).toContain(words(lang, 'late.promised', { promised: day(lang, '2026-11-27'), day: day(lang, '2026-11-30') }));
  });

  it('running late without a prediction still says so', () => {
    const shipment = runningLate();
    shipment.record.insights.prediction = null;
    shipment.promised_by = null;
    expect(page(shipment, lang)).toContain(words(lang, 'late.plain'));
  });

  it('delivered: when, every milestone done, no promise and no lateness', () => {
    const shipment = delivered();
    shipment.running_late = true;
    const html = page(shipment, lang);
    expect(html).toContain(`<h1>${words(lang, 'status.delivered')}</h1>`);
    expect(html).toContain(words(lang, 'delivered.on', {
      day: day(lang, '2026-11-25'), time: new Intl.DateTimeFormat(`${lang}-IN`, { timeZone: 'Asia/Kolkata', hour: 'numeric', minute: '2-digit' })
        .format(Date.parse(shipment.record.delivered_at!)),
    }));
    expect(html.match(/<li class="done">/g)).toHaveLength(5);
    expect(html).not.toContain('class="box late"');
    expect(html).not.toContain(words(lang, 'window.p90', { date: day(lang, '2026-11-30') }));
  });

  it('the milestone bar marks the current step, the events come newest first', () => {
    const html = page(moving(), lang);
    expect(html).toContain(`<li class="current" aria-current="step">${words(lang, 'milestone.in_transit')}`);
    expect(html.match(/<li class="done">/g)).toHaveLength(2);
    const times = [...html.matchAll(/<time datetime="([^"]+)"/g)].map((m) => m[1]!);
    expect(times).toEqual([...times].sort().reverse());
    expect(html).toContain(words(lang, 'events.heading'));
  });

  it('offers the other languages as plain links, each named in itself', () => {
    const html = page(moving(), lang);
    for (const other of LANGS) {
      const name = t(other, `lang.${other}`);
      if (other === lang) expect(html).toContain(`<span lang="${other}" aria-current="true">${name}</span>`);
      else expect(html).toContain(`<a href="${escapeHtml(switchUrl(other))}" lang="${other}" hreflang="${other}">${name}</a>`);
    }
  });

  it('is a fast page: lang, noindex, no script, nothing from another host', () => {
    const html = page(moving(), lang);
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(html).toContain(`<html lang="${lang}">`);
    expect(html).toContain('<meta name="robots" content="noindex, nofollow">');
    expect(html).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');
    expect(html).toContain('@media (prefers-color-scheme:dark)');
    expect(html).not.toMatch(/<script|<link rel="stylesheet"|@import|@font-face|\son[a-z]+=/i);
    // The logo comes from the page's own host (the routes serve it at that path).
    expect(html).toContain(`<img src="${escapeHtml(LOGO_URL)}" alt="">`);
    for (const url of urls(html)) {
      // The shop's own support link is the one way off the page: a link, never a fetch.
      expect(url === BRANDING.support_url || url.startsWith('/') || url.startsWith('?') || url === escapeHtml(LOGO_URL) || url === 'data:,', url).toBe(true);
    }
  });

  it('keeps a 60-event record with a long branding and a logo under 30 KB (the logo is served apart)', () => {
    const branding: PageBranding = {
      name: 'श्री गणेश हस्तशिल्प एवं हथकरघा वस्त्र भंडार प्राइवेट लिमिटेड',
      accent_color: '#0f5132',
      support_url: 'https://support.example-shop.in/help/orders/tracking?utm_source=tracking_page&utm_medium=link',
      mask_awb: true,
    };
    const html = page(longJourney(60), lang, branding);
    expect(html.match(/<time /g)).toHaveLength(60);
    expect(Buffer.byteLength(html)).toBeLessThanOrEqual(BUDGET_BYTES);
  });
});

describe.each(LANGS)('the order page in %s', (lang) => {
  const parcels = (): PageShipment[] => {
    const first = moving('1111222233', 'delhivery');
    first.carrier_name = 'Delhivery';
    first.page_url = '/t/tok_first';
    const second = failedAttempt('cod_not_ready');
    second.carrier_name = 'Blue Dart';
    second.record = { ...second.record, awb: '44330038841', carrier: 'bluedart' };
    const third = delivered();
    third.carrier_name = 'Delhivery';
    third.record = { ...third.record, awb: '5555666677' };
    return [first, second, third];
  };

  it('three parcels on two carriers: the count, each parcel\'s carrier, status and next step', () => {
    const html = renderOrderPage({ orderId: 'SO-2026-1187', shipments: parcels(), branding: BRANDING, lang, nowMs: NOW_MS, switchUrl });
    expect(html).toContain(`<h1>${words(lang, 'order.heading', { order: 'SO-2026-1187' })}</h1>`);
    expect(html).toContain(words(lang, 'order.count', { count: 3 }));
    for (let n = 1; n <= 3; n++) expect(html).toContain(words(lang, 'order.parcel', { n, total: 3 }));
    expect(html.match(/<dd>Delhivery<\/dd>/g)).toHaveLength(2);
    expect(html.match(/<dd>Blue Dart<\/dd>/g)).toHaveLength(1);
    for (const awb of ['1111222233', '44330038841', '5555666677']) expect(html).toContain(awb);
    expect(html).toContain(`${words(lang, 'status.in_transit')}</h2>`);
    expect(html).toContain(`${words(lang, 'status.attempt_failed')}</h2>`);
    expect(html).toContain(`${words(lang, 'status.delivered')}</h2>`);
    expect(html).toContain(words(lang, 'promise.day', { day: day(lang, '2026-11-28') }));
    expect(html).toContain(words(lang, 'ndr.cod_not_ready.do'));
    expect(html).toContain(`<a href="/t/tok_first">${words(lang, 'order.details')}`);
    // Headings nest: one h1, a h2 per parcel, its sections in h3.
    expect(html.match(/<h1[ >]/g)).toHaveLength(1);
    expect(html.match(/<h2[ >]/g)).toHaveLength(3);
    expect(new Set([...html.matchAll(/ id="([^"]+)"/g)].map((m) => m[1])).size).toBe(html.match(/ id="/g)!.length);
    expect(Buffer.byteLength(html)).toBeLessThanOrEqual(BUDGET_BYTES);
  });
});

describe('the gone page', () => {
  it.each(LANGS)('%s: the same words for a link that never was, was revoked or expired', (lang) => {
    const html = renderGonePage({ lang });
    expect(html).toContain(`<html lang="${lang}">`);
    expect(html).toContain(`<h1>${words(lang, 'gone.title')}</h1>`);
    expect(html).toContain(words(lang, 'gone.body'));
    expect(html).toContain('content="noindex, nofollow"');
    expect(html).not.toMatch(/<script|<nav/);
  });
});

describe('escaping', () => {
  const hostile = '<script>alert(1)</script>" onmouseover="alert(2)';

  it('escapes an event\'s text and location', () => {
    const shipment = moving();
    shipment.record.events[0] = { ...shipment.record.events[0]!, description: hostile, location: `Hub "A" & <b>B</b>` };
    const html = page(shipment, 'en');
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('" onmouseover="');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;&quot; onmouseover=&quot;alert(2)');
    expect(html).toContain('Hub &quot;A&quot; &amp; &lt;b&gt;B&lt;/b&gt;');
  });

  it('escapes the shop\'s name wherever it appears (title, header, support link) and an order id', () => {
    const html = renderOrderPage({
      orderId: '<i>42</i>', shipments: [moving()], branding: { ...BRANDING, name: hostile }, lang: 'hi', nowMs: NOW_MS, switchUrl,
    });
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('<i>42');
    const escaped = escapeHtml(hostile);
    expect(html).toContain(`<title>${escapeHtml(t('hi', 'page.title_shop', { shop: hostile }))}</title>`);
    expect(html).toContain(`<p class="brand">${escaped}</p>`);
    expect(html).toContain(escapeHtml(t('hi', 'support.link', { shop: hostile })));
  });

  it('escapes the switcher\'s URLs', () => {
    const html = renderShipmentPage({ shipment: moving(), branding: BRANDING, lang: 'en', nowMs: NOW_MS, switchUrl: (l) => `/t/x?a="b"&lang=${l}` });
    expect(html).toContain('href="/t/x?a=&quot;b&quot;&amp;lang=hi"');
  });

  it('drops a logo address off the page\'s host, a support link that is not https, an accent that is not #rrggbb', () => {
    for (const logoUrl of ['data:image/svg+xml;base64,PHN2Zz4=', 'https://cdn.example.com/logo.png', '//cdn.example.com/logo.png',
      'javascript:alert(1)', 'x/logo" onerror="x', '/t/x/logo', null]) {
      const html = renderShipmentPage({ shipment: moving(), branding: BRANDING, lang: 'en', nowMs: NOW_MS, switchUrl, logoUrl });
      expect(html, String(logoUrl)).not.toContain('<img');
    }
    for (const support_url of ['javascript:alert(1)', 'http://shop.example.in/help', 'not a url']) {
      expect(page(moving(), 'en', { ...BRANDING, support_url })).not.toContain(words('en', 'support.link', { shop: BRANDING.name }));
    }
    const html = page(moving(), 'en', { ...BRANDING, accent_color: '#000;}*{display:none' });
    expect(html).not.toContain('display:none');
  });
});

describe('the branding', () => {
  it('masks the AWB everywhere when the shop asks, and tells screen readers its last four', () => {
    const shipment = moving('1234567890');
    shipment.record.events[0] = { ...shipment.record.events[0]!, description: 'Shipment 1234567890 received' };
    const html = page(shipment, 'en', { ...BRANDING, mask_awb: true });
    expect(html).not.toContain('1234567890');
    expect(html).toContain('<span aria-hidden="true">••••••7890</span>');
    expect(html).toContain(words('en', 'awb.masked', { last4: '7890' }));
    expect(html).toContain('Shipment ••••••7890 received');
    expect(page(shipment, 'en', { ...BRANDING, mask_awb: false })).toContain('1234567890');
  });

  it('uses the accent where it keeps contrast and the default where it does not', () => {
    expect(page(moving(), 'en', { ...BRANDING, accent_color: '#7a1f5c' })).toContain('--a:#7a1f5c;--line:#7a1f5c');
    const pale = page(moving(), 'en', { ...BRANDING, accent_color: '#ffd43b' });
    expect(pale).toMatch(/:root\{[^}]*--a:#0b57b3;--line:#0b57b3/);
  });

  it('without a shop name says "Track your parcel" and offers the plain support link', () => {
    const html = page(moving(), 'ta', { ...BRANDING, name: '  ' });
    expect(html).toContain(`<title>${words('ta', 'page.title')}</title>`);
    expect(html).toContain(words('ta', 'support.link_plain'));
  });

  it('before the carrier\'s first scan: waiting for it, the carrier and the AWB as the shop prints it, nothing reached, no promise', () => {
    const shipment: PageShipment = { record: null, carrier: 'delhivery', awb: '1234567890', carrier_name: 'Delhivery', running_late: true, promised_by: null };
    for (const lang of LANGS) {
      const html = page(shipment, lang, { ...BRANDING, mask_awb: true });
      expect(html).toContain(`<h1>${words(lang, 'status.pending')}</h1>`);
      expect(html).toContain('<dd>Delhivery</dd>');
      expect(html).toContain('••••••7890');
      expect(html).not.toContain('1234567890');
      expect(html).toContain(words(lang, 'events.none'));
      expect(html).not.toMatch(/class="(?:done|current)"/);
      expect(html).not.toContain(words(lang, 'late.plain'));
      expect(Buffer.byteLength(html)).toBeLessThanOrEqual(BUDGET_BYTES);
    }
  });

  it('shows a record with no events yet', () => {
    const shipment: PageShipment = { record: record({ status: 'pending', stage: 'awaiting_pickup', events: [] }), running_late: false, promised_by: null };
    const html = page(shipment, 'bn');
    expect(html).toContain(`<h1>${words('bn', 'status.pending')}</h1>`);
    expect(html).toContain(words('bn', 'events.none'));
    expect(html).not.toContain('class="done"');
  });
});
