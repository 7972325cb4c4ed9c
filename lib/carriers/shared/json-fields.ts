/** Reading fields of loosely typed JSON answers. */

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A trimmed, space-collapsed text field (a finite number as its text), or null when absent or not text. */
export function textField(record: Record<string, unknown>, name: string): string | null {
  const value = record[name];
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value !== 'string') return null;
  const clean = value.replace(/\s+/g, ' ').trim();
  return clean === '' ? null : clean;
}

/** Trimmed text, or null when there is none. */
export function nonEmpty(text: string | null | undefined): string | null {
  const trimmed = text?.trim();
  return trimmed ? trimmed : null;
}
