export * from './normalize.ts';
export * from './rules.ts';
export * from './types.ts';
export * from './lane.ts';
export { matchKey, wordText, cleanText } from './text.ts';
export { parseCarrierTime, toUtcIso } from './time.ts';
export { EVENT_ID_LENGTH, isLegacyEventId } from './event-id.ts';
