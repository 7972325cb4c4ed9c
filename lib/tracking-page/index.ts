/** The tracking page's rendering: what the page routes import (README.md). */
export { renderGonePage, renderOrderPage, renderShipmentPage, type OrderPageInput, type ShipmentPageInput, type SwitchUrl } from './render.ts';
export { pageLanguage, type LanguageInputs } from './language.ts';
export { DEFAULT_BRANDING, LANGS, isLang, type Lang, type PageBranding, type PageShipment } from './types.ts';
