/** Status texts that carry a detail after " - " ("Undelivered - Address Incorrect"). */

// " - " before a detail; a dangling dash at the end separates nothing.
const DETAIL_SEPARATOR = /\s-(?:\s|$)/;

/** The label before " - " and the detail after it (null when empty); null when the text has no separator. */
export function splitDetail(text: string): { label: string; detail: string | null } | null {
  const separator = DETAIL_SEPARATOR.exec(text);
  if (!separator || separator.index === 0) return null;
  const detail = text.slice(separator.index + separator[0].length).trim();
  return { label: text.slice(0, separator.index).trim(), detail: detail === '' ? null : detail };
}
