import { describe, expect, it } from 'vitest';
import { DEFAULT_BRANDING, MAX_LOGO_BYTES, parseBranding, type BrandingDoc } from './index.ts';
import { dataUrl, jpegOf, pngOf } from './testutil/images.ts';

const ok = (body: unknown): BrandingDoc => {
  const result = parseBranding(body);
  if (!result.ok) throw new Error(result.problems.join('\n'));
  return result.doc;
};
const problems = (body: unknown): string[] => {
  const result = parseBranding(body);
  if (result.ok) throw new Error(`accepted: ${JSON.stringify(result.doc)}`);
  return result.problems;
};
const logoProblem = (logo: unknown) => problems({ name: 'Shop', logo });

describe('parseBranding', () => {
  it('accepts the whole shape, normalized, and fills what is left out with the defaults', () => {
    const png = dataUrl('image/png', pngOf());
    expect(ok({
      name: '  Chai Point  ', accent_color: '#1A73E8', logo: png, support_url: 'https://Shop.Example.com/help?x=1',
      mask_awb: true,
      frame_ancestors: ['https://Shop.Example.com', 'https://shop.example.com:443/', 'https://admin.example.com:8443', 'http://localhost:5173', 'http://127.0.0.1'],
    })).toEqual({
      name: 'Chai Point', accent_color: '#1a73e8', logo: png, support_url: 'https://shop.example.com/help?x=1', mask_awb: true,
      // The URL parser's form: lower case, default port dropped. Duplicates are kept as sent (each is harmless).
      frame_ancestors: ['https://shop.example.com', 'https://shop.example.com', 'https://admin.example.com:8443', 'http://localhost:5173', 'http://127.0.0.1'],
    });
    const { name: _name, ...defaults } = DEFAULT_BRANDING;
    expect(ok({ name: 'Shop' })).toEqual({ ...defaults, name: 'Shop' });
    expect(ok({ name: 'Shop', accent_color: null, logo: null, support_url: null, frame_ancestors: [] })).toEqual({ ...defaults, name: 'Shop' });
  });

  it('accepts a real PNG and a real JPEG, up to 51,200 bytes decoded', () => {
    for (const logo of [dataUrl('image/png', pngOf()), dataUrl('image/jpeg', jpegOf()), dataUrl('image/png', pngOf(16, 16, [255, 0, 0]))]) {
      expect(ok({ name: 'Shop', logo }).logo).toBe(logo);
    }
    const largest = pngOf(1, 1, [0, 0, 0], 0);
    const full = pngOf(1, 1, [0, 0, 0], MAX_LOGO_BYTES - largest.length - 12);
    expect(full.length).toBe(MAX_LOGO_BYTES);
    expect(ok({ name: 'Shop', logo: dataUrl('image/png', full) }).logo).toBe(dataUrl('image/png', full));
    // The type is case-insensitive on the way in and written in lower case.
    expect(ok({ name: 'Shop', logo: dataUrl('IMAGE/PNG', pngOf()) }).logo).toBe(dataUrl('image/png', pngOf()));
  });

  it('names: trimmed, 1 to 60 characters (code points), Indic joiners kept, no control characters', () => {
    expect(ok({ name: 'क्षत्रिय स्टोर' }).name).toBe('क्षत्रिय स्टोर');
    expect(ok({ name: 'ক্‍ষ Store' }).name).toBe('ক্‍ষ Store');
    expect(ok({ name: '😀'.repeat(60) }).name).toBe('😀'.repeat(60));
    expect(problems({})).toEqual(["name: required: the shop's name, text of 1 to 60 characters"]);
    expect(problems({ name: 42 })).toEqual(["name: must be the shop's name, text of 1 to 60 characters"]);
    expect(problems({ name: '   ' })).toEqual(["name: must not be empty: the shop's name, 1 to 60 characters"]);
    expect(problems({ name: 'x'.repeat(61) })).toEqual(['name: 61 characters; at most 60']);
    for (const name of ['Shop\nName', 'Shop\u0000', 'Shop\u0007x', 'Shop\u2028x', 'Shop\u202Eevil', 'a\u2066b']) {
      expect(problems({ name })).toEqual(['name: control characters, line breaks and direction overrides are not accepted']);
    }
    expect(problems({ name: 'Shop\ud800' })).toEqual(['name: not valid Unicode (a lone surrogate)']);
  });

  it('accent colours: #rrggbb or null', () => {
    for (const accent_color of ['#fff', '1a73e8', '#1a73e8ff', 'blue', '#gggggg', 'rgb(1,2,3)']) {
      expect(problems({ name: 'Shop', accent_color })).toEqual(['accent_color: must be #rrggbb (six hexadecimal digits, e.g. #1a73e8) or null']);
    }
    expect(problems({ name: 'Shop', accent_color: 123 })).toEqual(['accent_color: must be #rrggbb or null']);
  });

  it('refuses an SVG, whether declared or hidden behind a PNG label', () => {
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
    expect(logoProblem(dataUrl('image/svg+xml', svg))).toEqual(['logo: SVG is not accepted; PNG or JPEG only']);
    expect(logoProblem(`data:image/svg+xml;utf8,${svg.toString()}`)).toEqual(['logo: SVG is not accepted; PNG or JPEG only']);
    const labelledPng = dataUrl('image/png', Buffer.concat([Buffer.from('<?xml version="1.0"?>'), svg]));
    expect(logoProblem(labelledPng)).toEqual(['logo: SVG is not accepted; PNG or JPEG only']);
  });

  it('refuses a remote URL: the image must be sent and stored', () => {
    for (const logo of ['https://cdn.example.com/logo.png', 'http://cdn.example.com/logo.png', '//cdn.example.com/logo.png', ' HTTPS://x.y/z.png']) {
      expect(logoProblem(logo)).toEqual([
        'logo: a remote URL is not accepted; send the image itself as data:image/png;base64,… or data:image/jpeg;base64,… (it is stored with the branding)',
      ]);
    }
  });

  it('refuses other types, a JPEG declared as image/jpg, and anything that is not a base64 data: URL', () => {
    const gif = Buffer.from('R0lGODlhAQABAAAAACw=', 'base64');
    expect(logoProblem(dataUrl('image/gif', gif))).toEqual([
      'logo: image/gif is not accepted; PNG or JPEG only (data:image/png;base64,… or data:image/jpeg;base64,…)',
    ]);
    expect(logoProblem(dataUrl('image/webp', pngOf()))[0]).toMatch(/^logo: image\/webp is not accepted; PNG or JPEG only/);
    expect(logoProblem(dataUrl('text/html', Buffer.from('<p>')))[0]).toMatch(/^logo: text\/html is not accepted/);
    expect(logoProblem(dataUrl('image/jpg', jpegOf()))).toEqual(['logo: declare a JPEG as image/jpeg (data:image/jpeg;base64,…)']);
    expect(logoProblem('data:image/png,rawbytes')).toEqual(['logo: must be base64-encoded with nothing else declared: data:image/png;base64,…']);
    expect(logoProblem('data:image/png;charset=utf-8;base64,AAAA')[0]).toMatch(/^logo: must be base64-encoded/);
    expect(logoProblem('logo.png')[0]).toMatch(/^logo: must be a data: URL, PNG or JPEG only/);
    expect(logoProblem('data:image/png;base64,')).toEqual(['logo: the image is empty']);
    expect(logoProblem(42)).toEqual(['logo: must be a data: URL (PNG or JPEG, base64) or null']);
  });

  it('refuses invalid base64', () => {
    const valid = pngOf(1, 1, [0, 0, 0], 1).toString('base64');
    expect(valid).toMatch(/[^=]==$/);
    const message = ['logo: not valid base64 (standard alphabet A–Z a–z 0–9 + /, = padding, no spaces or line breaks)'];
    for (const data of [`${valid.slice(0, 20)}\n${valid.slice(20)}`, `${valid}$`, valid.replace(/=+$/, ''), `${valid.slice(0, -4)}-_AA`, `${valid}==`]) {
      expect(logoProblem(`data:image/png;base64,${data}`)).toEqual(message);
    }
  });

  it('refuses an image over 51,200 bytes decoded, saying how large it was', () => {
    const big = pngOf(1, 1, [0, 0, 0], 61_440 - pngOf(1, 1, [0, 0, 0], 0).length - 12);
    expect(big.length).toBe(61_440);
    expect(logoProblem(dataUrl('image/png', big))).toEqual(['logo: 61,440 bytes decoded; at most 51,200']);
    expect(logoProblem(dataUrl('image/png', pngOf(1, 1, [0, 0, 0], MAX_LOGO_BYTES))))
      .toEqual([`logo: ${(MAX_LOGO_BYTES + 81).toLocaleString('en-US')} bytes decoded; at most 51,200`]);
  });

  it('refuses bytes that are not the type declared', () => {
    expect(logoProblem(dataUrl('image/png', jpegOf()))).toEqual(['logo: the bytes are a JPEG image, but the data URL declares image/png']);
    expect(logoProblem(dataUrl('image/jpeg', pngOf()))).toEqual(['logo: the bytes are a PNG image, but the data URL declares image/jpeg']);
    expect(logoProblem(dataUrl('image/png', Buffer.from('GIF89a......'))))
      .toEqual(['logo: the bytes are not a PNG image (declared image/png); PNG or JPEG only (data:image/png;base64,… or data:image/jpeg;base64,…)']);
    // A PNG signature cut short is not a PNG.
    expect(logoProblem(dataUrl('image/png', pngOf().subarray(0, 7)))[0]).toMatch(/^logo: the bytes are not a PNG image/);
  });

  it('support links: https only, no credentials', () => {
    expect(ok({ name: 'Shop', support_url: 'https://shop.example.com' }).support_url).toBe('https://shop.example.com/');
    for (const support_url of ['http://shop.example.com/help', 'javascript:alert(1)', 'mailto:help@example.com', 'shop.example.com', '']) {
      expect(problems({ name: 'Shop', support_url })).toEqual(['support_url: must be an https URL (e.g. https://shop.example.com/help) or null']);
    }
    expect(problems({ name: 'Shop', support_url: 'https://user:pw@shop.example.com/' })).toEqual(['support_url: must not carry a user name or password']);
    expect(problems({ name: 'Shop', support_url: `https://shop.example.com/${'a'.repeat(2048)}` })).toEqual(['support_url: at most 2,048 characters']);
  });

  it('mask_awb: a boolean', () => {
    expect(ok({ name: 'Shop', mask_awb: true }).mask_awb).toBe(true);
    expect(problems({ name: 'Shop', mask_awb: 'yes' })).toEqual(['mask_awb: must be true or false']);
    expect(problems({ name: 'Shop', mask_awb: null })).toEqual(['mask_awb: must be true or false']);
  });

  it('frame_ancestors: at most 10 https origins (http for localhost and 127.0.0.1), each nothing but an origin', () => {
    const origins = Array.from({ length: 10 }, (_, i) => `https://shop${i}.example.com`);
    expect(ok({ name: 'Shop', frame_ancestors: origins }).frame_ancestors).toEqual(origins);
    expect(ok({ name: 'Shop', frame_ancestors: ['https://xn--80ak6aa92e.com', 'https://пример.рф'] }).frame_ancestors)
      .toEqual(['https://xn--80ak6aa92e.com', 'https://xn--e1afmkfd.xn--p1ai']);
    expect(problems({ name: 'Shop', frame_ancestors: [...origins, 'https://eleven.example.com'] })).toEqual(['frame_ancestors: at most 10 origins']);
    expect(problems({ name: 'Shop', frame_ancestors: 'https://shop.example.com' })).toEqual(['frame_ancestors: must be a list of at most 10 origins']);
    const refusals: [unknown, RegExp][] = [
      ['https://*.example.com', /^wildcards are not accepted/],
      ['*', /^wildcards are not accepted/],
      ['https://shop.example.com/orders', /^an origin has no path, query or fragment/],
      ['https://shop.example.com?x=1', /^an origin has no path, query or fragment/],
      ['https://shop.example.com#top', /^an origin has no path, query or fragment/],
      ['http://shop.example.com', /^must be https \(http only for http:\/\/localhost or http:\/\/127\.0\.0\.1/],
      ['http://192.168.1.5:3000', /^must be https/],
      ['ftp://shop.example.com', /^must be https/],
      ['https://user@shop.example.com', /^an origin has no user name or password/],
      ['https://[::1]', /^the host must be a domain name or an IPv4 address/],
      ['https://shop.example.com; script-src *', /^wildcards are not accepted/],
      ['https://shop.example.com;report-uri=x', /^the host must be a domain name or an IPv4 address/],
      ["'self'", /^expected an origin such as https:\/\/shop\.example\.com/],
      ['shop.example.com', /^expected an origin/],
      ['https://shop example.com', /^expected an origin/],
      ['https://shop.example.com:99999', /^expected an origin/],
      [42, /^must be an origin such as https:\/\/shop\.example\.com/],
    ];
    for (const [origin, expected] of refusals) {
      const found = problems({ name: 'Shop', frame_ancestors: ['https://ok.example.com', origin] });
      expect(found, String(origin)).toHaveLength(1);
      expect(found[0]!.replace(/^frame_ancestors\[1\]: /, ''), String(origin)).toMatch(expected);
    }
  });

  it('names every problem at once, and unknown fields', () => {
    const body = { name: '', accentColor: '#fff', accent_color: 'red', logo: 'https://x.y/l.png', frame_ancestors: ['https://a.b/c', 'http://x.y'] };
    expect(problems(body)).toEqual([
      "name: must not be empty: the shop's name, 1 to 60 characters",
      'accent_color: must be #rrggbb (six hexadecimal digits, e.g. #1a73e8) or null',
      'logo: a remote URL is not accepted; send the image itself as data:image/png;base64,… or data:image/jpeg;base64,… (it is stored with the branding)',
      'frame_ancestors[0]: an origin has no path, query or fragment; expected an origin such as https://shop.example.com or https://shop.example.com:8443',
      'frame_ancestors[1]: must be https (http only for http://localhost or http://127.0.0.1, to try the page on your own machine)',
      '"accentColor": not a branding field (the fields are name, accent_color, logo, support_url, mask_awb, frame_ancestors)',
    ]);
    for (const body of [null, [], 'Shop', 42]) expect(problems(body)[0]).toMatch(/^the body: must be a JSON object/);
  });
});
