import { MAX_LOGO_BYTES } from './doc.ts';

/** The two image types a logo may have: raster only, so a logo can carry no script (an SVG can). */
const TYPES = {
  'image/png': { name: 'PNG', signature: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] },
  'image/jpeg': { name: 'JPEG', signature: [0xff, 0xd8, 0xff] },
} as const;
type LogoType = keyof typeof TYPES;

const PNG_OR_JPEG = 'PNG or JPEG only (data:image/png;base64,… or data:image/jpeg;base64,…)';

/** `data:<type>[;params],<data>`; the scheme and type are case-insensitive (RFC 2397). */
const DATA_URL = /^data:([^;,]*)((?:;[^;,]*)*),(.*)$/is;
/** Standard base64 (not base64url), padded, nothing else: no spaces or line breaks. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

const startsWith = (bytes: Uint8Array, signature: readonly number[]) => signature.every((b, i) => bytes[i] === b);

/** What the bytes are, for a message that says what was sent instead. */
function sniff(bytes: Uint8Array): string | null {
  for (const [type, { signature }] of Object.entries(TYPES)) if (startsWith(bytes, signature)) return type;
  const head = Buffer.from(bytes.subarray(0, 256)).toString('latin1').trimStart().toLowerCase();
  if (head.startsWith('<svg') || head.startsWith('<?xml') || head.includes('<svg')) return 'image/svg+xml';
  return null;
}

/**
 * The logo as stored (`data:image/png;base64,…` with the type in lower case), or the problem to
 * tell the caller. The bytes are decoded and must be what the URL declares: a type is never
 * believed from its label alone, since the page serves the logo with that type.
 */
export function checkLogo(value: string): { value: string } | { problem: string } {
  if (/^(?:https?|ftp):|^\/\//i.test(value.trim())) {
    return {
      problem: 'a remote URL is not accepted; send the image itself as data:image/png;base64,… or data:image/jpeg;base64,… (it is stored with the branding)',
    };
  }
  const match = DATA_URL.exec(value);
  if (!match) return { problem: `must be a data: URL, ${PNG_OR_JPEG}, or null` };
  const type = match[1]!.trim().toLowerCase();
  const params = match[2]!.toLowerCase();
  const data = match[3]!;
  if (type === 'image/svg+xml' || type === 'image/svg') return { problem: 'SVG is not accepted; PNG or JPEG only' };
  if (type === 'image/jpg') return { problem: 'declare a JPEG as image/jpeg (data:image/jpeg;base64,…)' };
  if (!(type in TYPES)) return { problem: `${type || 'a data: URL without a type'} is not accepted; ${PNG_OR_JPEG}` };
  if (params !== ';base64') return { problem: `must be base64-encoded with nothing else declared: data:${type};base64,…` };
  if (data.length === 0) return { problem: 'the image is empty' };
  if (!BASE64.test(data)) return { problem: 'not valid base64 (standard alphabet A–Z a–z 0–9 + /, = padding, no spaces or line breaks)' };
  const bytes = Buffer.from(data, 'base64');
  if (bytes.length > MAX_LOGO_BYTES) {
    return { problem: `${bytes.length.toLocaleString('en-US')} bytes decoded; at most ${MAX_LOGO_BYTES.toLocaleString('en-US')}` };
  }
  const declared = TYPES[type as LogoType];
  if (!startsWith(bytes, declared.signature)) {
    const actual = sniff(bytes);
    if (actual === 'image/svg+xml') return { problem: 'SVG is not accepted; PNG or JPEG only' };
    if (actual) return { problem: `the bytes are a ${TYPES[actual as LogoType].name} image, but the data URL declares ${type}` };
    return { problem: `the bytes are not a ${declared.name} image (declared ${type}); ${PNG_OR_JPEG}` };
  }
  return { value: `data:${type};base64,${data}` };
}

/** A stored logo's type and bytes, for serving it (the page sends it from its own host). */
export function decodeLogo(logo: string): { contentType: LogoType; bytes: Buffer } {
  const comma = logo.indexOf(',');
  const contentType = logo.slice('data:'.length, logo.indexOf(';')) as LogoType;
  return { contentType, bytes: Buffer.from(logo.slice(comma + 1), 'base64') };
}
