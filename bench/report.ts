export interface BenchResult {
  name: string;
  value: number;
  unit: string;
  /** The target as text (e.g. ">= 100000"), or null when the figure is informative only. */
  target: string | null;
  pass: boolean | null;
}

export function printResults(section: string, results: BenchResult[]): void {
  console.log(`\n## ${section}`);
  for (const r of results) {
    const verdict = r.pass === null ? '' : r.pass ? '  PASS' : '  FAIL';
    const target = r.target ? `  (target ${r.target})` : '';
    console.log(`${r.name.padEnd(58)} ${String(r.value).padStart(12)} ${r.unit}${target}${verdict}`);
  }
}
