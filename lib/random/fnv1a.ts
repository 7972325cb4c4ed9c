/**
 * FNV-1a, 32 bits: a stable number for a text, the same in every process and version, for seeds
 * drawn from names and numbers (a shipment's `carrier:awb` in the delivery model; the sandbox's
 * hashes start from it). Cheap and well spread, not collision-resistant: not for untrusted input.
 */
export function fnv1a32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
