/**
 * The e-mail's unsubscribe page (RFC 8058's manual path): a GET only asks, since link scanners
 * follow GETs; the button POSTs, as the mailbox provider's one-click POST does. Words from the
 * notices' catalogues, in the language of the e-mail that linked here.
 */
import { text } from '../../../lib/buyer-notices/templates.ts';
import { escapeHtml } from '../../../lib/html/index.ts';
import type { Lang } from '../../../lib/tracking-page/types.ts';

function frame(lang: Lang, body: string): string {
  const title = text(lang, 'unsubscribe.title');
  return `<!doctype html>
<html lang="${lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;line-height:1.5}button{font-size:1rem;padding:.6rem 1rem}</style>
</head><body><main><h1>${escapeHtml(title)}</h1>${body}</main></body></html>`;
}

export const unsubscribeAsk = (lang: Lang, action: string) => frame(lang, `<p>${escapeHtml(text(lang, 'unsubscribe.ask'))}</p>`
  + `<form method="post" action="${escapeHtml(action)}"><input type="hidden" name="List-Unsubscribe" value="One-Click">`
  + `<button type="submit">${escapeHtml(text(lang, 'unsubscribe.button'))}</button></form>`);
export const unsubscribeDone = (lang: Lang) => frame(lang, `<p>${escapeHtml(text(lang, 'unsubscribe.done'))}</p>`);
export const unsubscribeInvalid = (lang: Lang) => frame(lang, `<p>${escapeHtml(text(lang, 'unsubscribe.invalid'))}</p>`);
