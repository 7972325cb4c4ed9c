import { describe, expect, it } from 'vitest';
import { GRAPHIC_CONTRAST, SCHEMES, TEXT_CONTRAST, contrast, pageColors } from './colors.ts';

describe('contrast', () => {
  it('follows WCAG: black on white is 21:1, a colour on itself 1:1', () => {
    expect(contrast('#000000', '#ffffff')).toBeCloseTo(21, 5);
    expect(contrast('#ffffff', '#000000')).toBeCloseTo(21, 5);
    expect(contrast('#7a1f5c', '#7a1f5c')).toBe(1);
    // WCAG's own example pair: #777 on white is just under 4.5:1.
    expect(contrast('#777777', '#ffffff')).toBeCloseTo(4.48, 2);
  });

  it('keeps the defaults of both schemes readable as text on their backgrounds', () => {
    for (const s of Object.values(SCHEMES)) {
      expect(contrast(s.accent, s.bg)).toBeGreaterThanOrEqual(TEXT_CONTRAST);
      expect(contrast(s.accent, s.card)).toBeGreaterThanOrEqual(TEXT_CONTRAST);
    }
  });
});

describe('pageColors', () => {
  it('keeps a dark accent for light-scheme text and lines, and falls back in the dark scheme', () => {
    const c = pageColors('#7A1F5C');
    expect(c.light).toEqual({ text: '#7a1f5c', line: '#7a1f5c' });
    expect(c.dark).toEqual({ text: SCHEMES.dark.accent, line: SCHEMES.dark.accent });
  });

  it('uses an accent for lines where it holds 3:1 but not for text below 4.5:1', () => {
    // #e8590c: about 3.5:1 on white: a line, not link text.
    expect(contrast('#e8590c', SCHEMES.light.bg)).toBeGreaterThanOrEqual(GRAPHIC_CONTRAST);
    expect(contrast('#e8590c', SCHEMES.light.bg)).toBeLessThan(TEXT_CONTRAST);
    expect(pageColors('#e8590c').light).toEqual({ text: SCHEMES.light.accent, line: '#e8590c' });
  });

  it('drops a light accent on the light scheme and keeps it on the dark one', () => {
    expect(pageColors('#ffd43b').light).toEqual({ text: SCHEMES.light.accent, line: SCHEMES.light.accent });
    expect(pageColors('#ffd43b').dark).toEqual({ text: '#ffd43b', line: '#ffd43b' });
  });

  it('treats anything but #rrggbb as no accent: it lands inside <style>', () => {
    for (const bad of ['red', '#fff', '#7a1f5c;}body{display:none', 'url(https://evil.example/x)', null]) {
      expect(pageColors(bad)).toEqual({
        light: { text: SCHEMES.light.accent, line: SCHEMES.light.accent },
        dark: { text: SCHEMES.dark.accent, line: SCHEMES.dark.accent },
      });
    }
  });
});
