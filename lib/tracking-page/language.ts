/**
 * The page's language (contracts.md "Tracking page"): `?lang=` when the page has it, else the
 * watch's language, else the best Accept-Language match, else English. Pure.
 */
import { type Lang, isLang } from './types.ts';

export interface LanguageInputs {
  query?: string | null;
  watchLanguage?: string | null;
  acceptLanguage?: string | null;
}

/** `hi`, `hi-IN`, `HI_in` → `hi`; anything the page has no catalogue for → null. */
function supported(tag: string | null | undefined): Lang | null {
  if (!tag) return null;
  const primary = tag.trim().toLowerCase().split(/[-_]/)[0] ?? '';
  return isLang(primary) ? primary : null;
}

/**
 * The supported language the header prefers most (RFC 9110 §12.5.4): highest q first, ties in
 * the header's order; q=0 means "not this one", and `*` says nothing about which.
 */
export function fromAcceptLanguage(header: string | null | undefined): Lang | null {
  if (!header) return null;
  const ranges = header.split(',').map((part, index) => {
    const [tag = '', ...params] = part.split(';').map((s) => s.trim());
    const qParam = params.find((p) => /^q=/i.test(p));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    return { tag, q: Number.isFinite(q) ? q : 0, index };
  });
  ranges.sort((a, b) => b.q - a.q || a.index - b.index);
  for (const { tag, q } of ranges) {
    if (q <= 0) continue;
    const lang = supported(tag);
    if (lang) return lang;
  }
  return null;
}

export function pageLanguage({ query, watchLanguage, acceptLanguage }: LanguageInputs): Lang {
  return supported(query) ?? supported(watchLanguage) ?? fromAcceptLanguage(acceptLanguage) ?? 'en';
}
