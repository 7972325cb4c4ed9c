/**
 * The catalogues' completeness (issue 42: "a test fails when a catalogue lacks a key that English
 * has"): every key, every message parseable, the same arguments as English.
 */
import { IntlMessageFormat } from 'intl-messageformat';
import { describe, expect, it } from 'vitest';
import { CATALOGUES, formatAgo, formatDay, t } from './messages.ts';
import { NDR_REASONS, STATUSES } from '../schemas/index.ts';
import { HOUR_MS, MINUTE_MS } from '../time/index.ts';
import { LANGS } from './types.ts';

const en = CATALOGUES.en;
const OTHERS = LANGS.filter((l) => l !== 'en');

/** The argument names a message uses, inside plurals and selects too ({count} of a plural is one). */
function argumentsOf(message: string, locale: string): string[] {
  const names = new Set<string>();
  const walk = (elements: unknown[]) => {
    for (const el of elements as { type: number; value?: unknown; options?: Record<string, { value: unknown[] }>; children?: unknown[] }[]) {
      // Literal (0) and # (7) elements name no argument; every other kind's `value` is its name.
      if (el.type !== 0 && el.type !== 7 && typeof el.value === 'string') names.add(el.value);
      for (const option of Object.values(el.options ?? {})) walk(option.value);
      if (el.children) walk(el.children);
    }
  };
  walk(new IntlMessageFormat(message, locale).getAst());
  return [...names].sort();
}

describe('message catalogues', () => {
  it.each(OTHERS)('%s has every key English has, and no other', (lang) => {
    const missing = Object.keys(en).filter((key) => !(key in CATALOGUES[lang]));
    const extra = Object.keys(CATALOGUES[lang]).filter((key) => !(key in en));
    expect({ missing, extra }).toEqual({ missing: [], extra: [] });
  });

  it.each(LANGS)('%s: every message parses and uses the same arguments as English', (lang) => {
    for (const [key, message] of Object.entries(CATALOGUES[lang])) {
      expect(message.trim(), `${lang} ${key} is empty`).not.toBe('');
      expect(argumentsOf(message, `${lang}-IN`), `${lang} ${key}`).toEqual(argumentsOf(en[key]!, 'en-IN'));
    }
  });

  it.each(OTHERS)('%s is translated: its status and failed-attempt words are not the English ones', (lang) => {
    for (const key of Object.keys(en).filter((k) => /^(status|ndr|milestone|promise|late|window)\./.test(k))) {
      expect(CATALOGUES[lang][key], `${lang} ${key}`).not.toBe(en[key]);
    }
  });

  it('names every normalized status and every NDR reason (what happened, what to do)', () => {
    for (const status of STATUSES) expect(en).toHaveProperty([`status.${status}`]);
    for (const reason of NDR_REASONS) {
      expect(en).toHaveProperty([`ndr.${reason}.what`]);
      expect(en).toHaveProperty([`ndr.${reason}.do`]);
    }
  });

  it('names each language in itself, in every catalogue', () => {
    for (const lang of LANGS) for (const other of LANGS) expect(CATALOGUES[lang][`lang.${other}`]).toBe(en[`lang.${other}`]);
  });
});

describe('formatting', () => {
  it('plurals follow each language\'s rules', () => {
    expect(t('en', 'order.count', { count: 1 })).toBe('1 parcel');
    expect(t('en', 'order.count', { count: 3 })).toBe('3 parcels');
    expect(t('ta', 'order.count', { count: 1 })).toBe('1 பார்சல்');
    expect(t('ta', 'order.count', { count: 3 })).toBe('3 பார்சல்கள்');
    expect(t('hi', 'ndr.attempts', { count: 2 })).toBe('अब तक 2 कोशिशें');
    // Bengali writes its numbers in its own digits.
    expect(t('bn', 'order.count', { count: 3 })).toBe('৩টি পার্সেল');
  });

  it('writes IST days in each language', () => {
    expect(formatDay('en', '2026-11-26')).toBe('Thursday, 26 November');
    expect(formatDay('hi', '2026-11-26')).toContain('गुरुवार');
    expect(formatDay('ta', '2026-11-26')).toContain('வியாழன்');
    expect(formatDay('bn', '2026-11-26')).toContain('বৃহস্পতিবার');
  });

  it('says how long ago in the largest whole unit', () => {
    const now = Date.parse('2026-11-26T10:00:00.000Z');
    expect(formatAgo('en', new Date(now - 5 * MINUTE_MS).toISOString(), now)).toBe('5 minutes ago');
    expect(formatAgo('en', new Date(now - 3 * HOUR_MS).toISOString(), now)).toBe('3 hours ago');
    expect(formatAgo('en', new Date(now - 30 * HOUR_MS).toISOString(), now)).toBe('yesterday');
    expect(formatAgo('hi', new Date(now - 3 * HOUR_MS).toISOString(), now)).toBe('3 घंटे पहले');
  });
});
