/** Zod field schemas for the loose values carriers send. */
import { z } from 'zod';
import type { ParsedPoll } from '../types.ts';

/** Text or number as the carrier sends it, trimmed; blank → null. */
export const looseText = z.union([z.string(), z.number()]).nullish()
  .transform((v) => (v === null || v === undefined || String(v).trim() === '' ? null : String(v).trim()));

/** Optional text: a wrong type reads as absent rather than failing the whole answer. */
export const optionalText = z.string().nullish().catch(null);

/** The error outcome of an answer that is not in the expected shape, naming where the first problem is. */
export function unexpectedShape(format: 'JSON' | 'XML', error: z.ZodError): ParsedPoll {
  return { outcome: 'error', error: `unexpected ${format} at ${error.issues[0]?.path.join('.') ?? '?'}` };
}
