/**
 * The shape of a consignment number as runs of character classes: digits `D`, letters `L`, dashes
 * `-`, each with its length (`EE123450102IN` → `L2D9L2`), the same runs without lengths (its
 * skeleton, `LDL`), and the shape with its leading letters (its series, `EE L2D9L2`). Detection compares numbers by these: two numbers of one shape are
 * indistinguishable to every pattern that only counts letters and digits. Pure.
 */
export interface Shape {
  signature: string;
  skeleton: string;
  /**
   * The leading letters with the signature (`EE` + `L2D9L2`), or null for a number that starts with
   * a digit: carriers put their series letters there (EE/EM Speed Post, RK/CP India Post, SF
   * Shadowfax, FMP Ekart), so two numbers sharing them most likely share the carrier.
   */
  series: string | null;
}

function classOf(ch: string): string {
  if (ch >= '0' && ch <= '9') return 'D';
  if (ch === '-') return '-';
  return 'L';
}

export function shapeOf(awb: string): Shape {
  let signature = '';
  let skeleton = '';
  let run = '';
  let length = 0;
  for (const ch of awb) {
    const cls = classOf(ch);
    if (cls === run) {
      length++;
      continue;
    }
    if (run) signature += `${run}${length}`;
    run = cls;
    length = 1;
    skeleton += cls;
  }
  if (run) signature += `${run}${length}`;
  const letters = /^[A-Z]+/i.exec(awb)?.[0];
  return { signature, skeleton, series: letters ? `${letters.toUpperCase()} ${signature}` : null };
}
