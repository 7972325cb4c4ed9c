/**
 * A string of its own, for a key a long-lived book holds: a substring of a poll's body or of a
 * request (an AWB) is a V8 slice that keeps the whole text alive, and a key built by `+` or a
 * template is a chain of string objects. A copy through a buffer is one flat string.
 */
export const ownString = (text: string): string => Buffer.from(text, 'utf8').toString('utf8');
