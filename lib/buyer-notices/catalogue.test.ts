import { describe, expect, it } from 'vitest';
import { LANGS } from '../tracking-page/types.ts';
import { NOTICE_KINDS } from './kinds.ts';
import { emailOf, NOTICE_CATALOGUES, valuesOf, variablesOf } from './templates.ts';

describe('the notices\' catalogues', () => {
  it('have every English message in every language, with the same variables per notice', () => {
    const keys = Object.keys(NOTICE_CATALOGUES.en).sort();
    for (const lang of LANGS) {
      expect(Object.keys(NOTICE_CATALOGUES[lang]).sort()).toEqual(keys);
      for (const kind of NOTICE_KINDS) expect(variablesOf(kind, lang).sort()).toEqual(variablesOf(kind, 'en').sort());
    }
  });

  it('fill a template with values of at most 30 characters (DLT), the link apart', () => {
    for (const lang of LANGS) {
      const values = valuesOf({ awb: '1234567890102', day: '2026-12-03', reason: 'cod_not_ready' },
        lang, 'The Very Long Name Of A Little Handloom Shop', 'Delhivery', 'https://track.example.in/t/abc');
      for (const [name, value] of Object.entries(values)) if (name !== 'link') expect(value.length).toBeLessThanOrEqual(30);
      const mail = emailOf('failed_attempt', lang, values, 'https://track.example.in/notices/unsubscribe/x');
      expect(mail.text).toContain('https://track.example.in/notices/unsubscribe/x');
      expect(mail.html).toContain(`lang="${lang}"`);
    }
  });
});
