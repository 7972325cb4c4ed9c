/**
 * The tracking page (contracts.md "Tracking page"): `/t/<token>` shows one watched shipment and
 * `/o/<token>` every watched parcel of one order of a key, to the shop's customer, who has no key.
 * The token is the permission (lib/push/page-links.ts) and the key must still stand; a view reads
 * the cached record (no lookup is consumed) and asks for a fresh poll of a moving shipment whose
 * record is older than 30 minutes, at most once per 30 minutes per shipment. Every failure is the
 * same 404 page: a visitor learns nothing about keys, watches or shipments.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { isGone, standingOf } from '../../../lib/access/index.ts';
import { decodeLogo, type BrandingStore, type PageBrandingDoc } from '../../../lib/branding/index.ts';
import { isTerminalStage } from '../../../lib/cache/index.ts';
import { PAGE_AFTER_END_MS, type Push, type WatchDoc } from '../../../lib/push/index.ts';
import { parseAwb, type KeyMode, type TrackingRecord } from '../../../lib/schemas/index.ts';
import { WindowCounter } from '../../../lib/throttle/index.ts';
import { MINUTE_MS } from '../../../lib/time/index.ts';
import {
  DEFAULT_BRANDING, pageLanguage, renderGonePage, renderOrderPage, renderShipmentPage, type Lang, type PageShipment,
} from '../../../lib/tracking-page/index.ts';
import type { ApiDeps } from '../context/deps.ts';
import { ApiError, methodNotAllowed } from '../http/errors.ts';
import { api } from '../openapi/spec.ts';
import { watchRecord } from './trackings.ts';

type PageDeps = Pick<ApiDeps, 'access' | 'clock' | 'product' | 'tracking' | 'pageViewsPerMinute'>;

/** A key's branding as the page reads it (lib/branding's store): what it shows, the shop's origins that may frame it, the logo apart. */
export type PageBrandingSource = Pick<BrandingStore, 'forPage' | 'logo'>;

/** Views per client address a minute by default: a person reloads, a shop's order page frames it; a scraper is held back. */
const VIEWS_PER_MINUTE = 120;
/** A moving shipment's record older than this is refreshed on a view, at most once per this long. */
const REFRESH_AFTER_MS = 30 * MINUTE_MS;

/**
 * The page's own policy: nothing from another host, no script at all; framed only by the shop's
 * listed origins. Images: the shop's logo from this host (`<token>/logo`), and `data:` for the
 * empty favicon that stops the browser asking for one.
 */
function pagePolicy(frameAncestors: readonly string[]): string {
  const frames = frameAncestors.length ? frameAncestors.join(' ') : "'none'";
  return "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; form-action 'none'; "
    + `frame-ancestors ${frames}`;
}

/** A logo stays a day in the visitor's browser: its URL names its version, so a new logo is a new URL. */
const LOGO_CACHE_CONTROL = 'private, max-age=86400, immutable';

interface PageQuery { lang?: string }

const GONE_DESCRIPTION = 'HTML: the link is not valid, deleted, revoked or past 30 days after the shipment ended';

export function registerTrackingPages(app: FastifyInstance, deps: PageDeps, push: Push, brandings: PageBrandingSource | null): void {
  // Counted in this process's memory: a view must cost less than a file or Redis write (lib/throttle/window-counter.ts).
  const views = new WindowCounter({ limit: deps.pageViewsPerMinute ?? VIEWS_PER_MINUTE, windowMs: MINUTE_MS });
  const refreshAsked = (carrier: string, awb: string, mode: KeyMode) => push.kv.update<number, boolean>(
    `page-refresh:{${mode}:${carrier}:${awb}}`,
    (asked) => (asked !== null ? { result: false } : { next: deps.clock(), result: true, ttlMs: REFRESH_AFTER_MS }),
  );

  /** A stale moving record: one fresh poll asked for (in the background; the view answers with what is cached). */
  const refreshIfStale = async (record: TrackingRecord | null, carrier: string, awb: string, mode: KeyMode) => {
    if (record && isTerminalStage(record.insights.current_stage)) return;
    if (record && deps.clock() - Date.parse(record.last_polled_at) < REFRESH_AFTER_MS) return;
    const parsed = parseAwb(awb);
    if (!parsed || !(await refreshAsked(carrier, awb, mode))) return;
    void deps.tracking.refresh(carrier, parsed, mode).catch(() => undefined);
  };

  /** The key behind a token, when it still stands (revoked and suspended keys' pages are gone). */
  const standingKey = async (prefix: string) => {
    const key = await deps.access.getByPrefix(prefix);
    const standing = standingOf(key, new Date(deps.clock()));
    return key && !isGone(standing) && standing !== 'suspended' ? key : null;
  };

  const carrierName = (slug: string) => deps.product.registry.list().find((c) => c.slug === slug)?.name ?? slug;

  /** A watch whose page still opens: not deleted, not past 30 days after its shipment ended. */
  const pageOpens = (doc: WatchDoc | null): doc is WatchDoc =>
    doc !== null && !(doc.terminal_ms !== null && deps.clock() > doc.terminal_ms + PAGE_AFTER_END_MS);

  /**
   * A watch's parcel as the page shows it. Before the carrier's first scan the page says it waits
   * for it (shops send the link at booking); a stale or missing record asks for a poll.
   */
  const parcelOf = async (doc: WatchDoc, mode: KeyMode, pageUrl: string | null): Promise<PageShipment> => {
    const found = await deps.tracking.peekFound(doc.carrier, doc.awb, mode);
    await refreshIfStale(found?.record ?? null, doc.carrier, doc.awb, mode);
    const promisedBy = doc.promised_by ?? null;
    const record = watchRecord(deps.tracking, found, { promised_by: promisedBy }, mode);
    const parcel = { running_late: doc.late_told === true, promised_by: promisedBy, carrier_name: carrierName(doc.carrier), page_url: pageUrl };
    return record ? { ...parcel, record } : { ...parcel, record: null, carrier: doc.carrier, awb: doc.awb };
  };

  const brandingOf = async (prefix: string) => (brandings ? await brandings.forPage(prefix) : null);

  const send = async (request: FastifyRequest<{ Querystring: PageQuery }>, reply: FastifyReply, page: {
    status: number; lang: Lang; html: string; branding: { frame_ancestors: readonly string[] } | null;
  }) => reply
    .code(page.status)
    .type('text/html; charset=utf-8')
    .header('Cache-Control', 'private, no-store')
    .header('X-Robots-Tag', 'noindex, nofollow')
    .header('Content-Language', page.lang)
    .header('Vary', 'Accept-Language')
    .header('x-page-frame-ancestors', JSON.stringify(page.branding?.frame_ancestors ?? []))
    .send(page.html);

  const gone = (request: FastifyRequest<{ Querystring: PageQuery }>, reply: FastifyReply) => {
    const lang = pageLanguage({ query: request.query.lang, acceptLanguage: request.headers['accept-language'] });
    return send(request, reply, { status: 404, lang, html: renderGonePage({ lang }), branding: null });
  };

  const viewAllowed = (request: FastifyRequest) => {
    const verdict = views.take(request.ip, deps.clock());
    if (!verdict.allowed) {
      throw new ApiError('rate_limit_exceeded', 'Too many page views from this address; try again in a minute.', { 'Retry-After': verdict.retryAfterSeconds });
    }
  };

  app.register(async (pages) => {
    // After hardening's headers (its onSend runs first): this page's own CSP, and framing by the shop's origins only.
    pages.addHook('onSend', async (_request, reply, payload) => {
      const listed = reply.getHeader('x-page-frame-ancestors');
      if (typeof listed === 'string') {
        reply.removeHeader('x-page-frame-ancestors');
        const origins = JSON.parse(listed) as string[];
        reply.header('content-security-policy', pagePolicy(origins));
        if (origins.length) reply.removeHeader('x-frame-options');
      }
      return payload;
    });

    const params = z.object({ token: z.string() });
    const query = z.object({ lang: z.string().optional().describe('en, hi, ta or bn; else the watch\'s language, else Accept-Language') });
    /** Both pages' description: no key, HTML either way (the 404 page too). */
    const pageSpec = (operationId: string, summary: string) => api({
      operationId, summary, caller: 'none', tags: ['Tracking page'], params, query,
      responses: {
        200: { description: 'HTML: nothing from another host, no script; noindex', text: 'text/html', headers: ['Cache-Control'] },
        404: { description: GONE_DESCRIPTION, text: 'text/html', headers: ['Cache-Control'] },
      },
      errors: ['rate_limit_exceeded'],
    });
    type PageRequest = { Params: { token: string }; Querystring: PageQuery };
    /**
     * A shipment token's watch, or null when its page is gone. Reads no record: the logo route
     * asks only this.
     */
    const shipmentWatch = async (token: string) => {
      const target = await push.pages.resolve(token);
      if (target?.kind !== 'shipment' || !(await standingKey(target.prefix))) return null;
      const doc = await push.watches.getDoc(target.prefix, target.carrier, target.awb);
      // A watch deleted and made again has a new link: the old one opens nothing.
      return doc?.watched_since_ms === target.watched_since_ms && pageOpens(doc) ? { target, doc } : null;
    };

    /** An order token's watches (the order's own, of this key, whose pages open), or null when none is left. */
    const orderWatches = async (token: string) => {
      const target = await push.pages.resolve(token);
      if (target?.kind !== 'order' || !(await standingKey(target.prefix))) return null;
      const names = (await push.pages.orderMembers(target.prefix, target.order_id)).sort();
      const docs = await Promise.all(names.map((name) => {
        const split = name.indexOf(':');
        return push.watches.getDoc(target.prefix, name.slice(0, split), name.slice(split + 1));
      }));
      // Only the order's own parcels, of this key: a watch moved to another order is not listed here.
      const own = docs.filter((doc): doc is WatchDoc => doc?.order_id === target.order_id && pageOpens(doc));
      return own.length ? { target, docs: own } : null;
    };

    /** The logo's address relative to the page (`/t/<token>` → `/t/<token>/logo`), so the page works behind any base URL. */
    const logoUrlOf = (token: string, branding: PageBrandingDoc | null) => (branding?.logo_version ? `${token}/logo?v=${branding.logo_version}` : null);

    const shipmentSpec = pageSpec('trackingPage', 'A watched shipment\'s tracking page (no API key; consumes no lookup)');
    pages.get<PageRequest>('/t/:token', shipmentSpec, async (request, reply) => {
      viewAllowed(request);
      const found = await shipmentWatch(request.params.token);
      if (!found) return gone(request, reply);
      const parcel = await parcelOf(found.doc, found.target.mode, null);
      const branding = await brandingOf(found.target.prefix);
      const lang = pageLanguage({ query: request.query.lang, watchLanguage: found.doc.language ?? null, acceptLanguage: request.headers['accept-language'] });
      const html = renderShipmentPage({
        shipment: parcel, branding: branding ?? DEFAULT_BRANDING, lang, nowMs: deps.clock(), switchUrl: (l) => `?lang=${l}`,
        logoUrl: logoUrlOf(request.params.token, branding),
      });
      return send(request, reply, { status: 200, lang, html, branding });
    });

    const orderSpec = pageSpec('orderTrackingPage', 'Every watched parcel of one order (no API key; consumes no lookup)');
    pages.get<PageRequest>('/o/:token', orderSpec, async (request, reply) => {
      viewAllowed(request);
      const found = await orderWatches(request.params.token);
      if (!found) return gone(request, reply);
      const { target } = found;
      const parcels: PageShipment[] = [];
      for (const doc of found.docs) {
        const token = await push.pages.tokenOf({
          kind: 'shipment', prefix: target.prefix, mode: target.mode, carrier: doc.carrier, awb: doc.awb, watched_since_ms: doc.watched_since_ms,
        });
        parcels.push(await parcelOf(doc, target.mode, `../t/${token}`));
      }
      const branding = await brandingOf(target.prefix);
      const first = found.docs.find((d) => d.language)?.language ?? null;
      const lang = pageLanguage({ query: request.query.lang, watchLanguage: first, acceptLanguage: request.headers['accept-language'] });
      const html = renderOrderPage({
        orderId: target.order_id, shipments: parcels, branding: branding ?? DEFAULT_BRANDING, lang, nowMs: deps.clock(),
        switchUrl: (l) => `?lang=${l}`, logoUrl: logoUrlOf(request.params.token, branding),
      });
      return send(request, reply, { status: 200, lang, html, branding });
    });

    /** The shop's logo, from this host, for as long as the page it belongs to opens (the same 404 page otherwise). */
    const logoSpec = (operationId: string, page: string) => api({
      operationId, summary: `The shop's logo on ${page} (no API key; cached a day: its URL names its version)`, caller: 'none', tags: ['Tracking page'],
      params, query: z.object({ v: z.string().optional().describe('The logo\'s version, as the page names it; any value serves the current logo') }),
      responses: {
        200: { description: 'The logo as stored: image/png or image/jpeg', text: 'image/png image/jpeg', headers: ['Cache-Control'] },
        404: { description: `${GONE_DESCRIPTION}; or the shop has no logo`, text: 'text/html', headers: ['Cache-Control'] },
      },
      errors: ['rate_limit_exceeded'],
    });
    const sendLogo = async (request: FastifyRequest<{ Querystring: PageQuery }>, reply: FastifyReply, prefix: string | null) => {
      const logo = prefix && brandings ? await brandings.logo(prefix) : null;
      if (!logo) return gone(request, reply);
      const { contentType, bytes } = decodeLogo(logo);
      return reply.type(contentType).header('Cache-Control', LOGO_CACHE_CONTROL).header('X-Robots-Tag', 'noindex, nofollow').send(bytes);
    };
    pages.get<PageRequest>('/t/:token/logo', logoSpec('trackingPageLogo', 'a tracking page'), async (request, reply) => {
      viewAllowed(request);
      return sendLogo(request, reply, (await shipmentWatch(request.params.token))?.target.prefix ?? null);
    });
    pages.get<PageRequest>('/o/:token/logo', logoSpec('orderTrackingPageLogo', 'an order\'s page'), async (request, reply) => {
      viewAllowed(request);
      return sendLogo(request, reply, (await orderWatches(request.params.token))?.target.prefix ?? null);
    });

    methodNotAllowed(pages, '/t/:token', ['GET']);
    methodNotAllowed(pages, '/o/:token', ['GET']);
    methodNotAllowed(pages, '/t/:token/logo', ['GET']);
    methodNotAllowed(pages, '/o/:token/logo', ['GET']);
  });
}
