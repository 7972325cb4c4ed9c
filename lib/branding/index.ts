export { BrandingSchema, DEFAULT_BRANDING, MAX_FRAME_ANCESTORS, MAX_LOGO_BYTES, MAX_NAME_LENGTH, type BrandingDoc } from './doc.ts';
export { BrandingInputSchema, parseBranding } from './parse.ts';
export { checkLogo, decodeLogo } from './logo.ts';
export { checkFrameAncestor } from './origins.ts';
export { BrandingStore, logoVersionOf, type PageBrandingDoc } from './store.ts';
