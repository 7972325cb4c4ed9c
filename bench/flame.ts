/**
 * A flame graph as text, from a V8 .cpuprofile: the call tree from the root down, each frame with
 * its share of the busy samples (inclusive), frames under MIN_SHARE left out, so it fits in a
 * closing note or a terminal. The .cpuprofile itself opens as a drawn flame graph in Chrome
 * DevTools or speedscope.
 */
export interface ProfileNode { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount?: number; children?: number[] }
export interface CpuProfile { nodes: ProfileNode[]; samples: number[] }

const MIN_SHARE = 0.02;
const MAX_DEPTH = 40;

export function textFlameGraph(profile: CpuProfile, label: (node: ProfileNode) => string, minShare = MIN_SHARE): string[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfSamples = new Map<number, number>();
  let busy = 0;
  for (const id of profile.samples) {
    const node = byId.get(id);
    if (!node || node.callFrame.functionName === '(idle)') continue;
    busy += 1;
    selfSamples.set(id, (selfSamples.get(id) ?? 0) + 1);
  }
  const inclusive = new Map<number, number>();
  const total = (id: number): number => {
    const known = inclusive.get(id);
    if (known !== undefined) return known;
    const node = byId.get(id)!;
    const sum = (selfSamples.get(id) ?? 0) + (node.children ?? []).reduce((s, c) => s + total(c), 0);
    inclusive.set(id, sum);
    return sum;
  };
  const root = profile.nodes[0]!;
  total(root.id);
  const lines: string[] = [];
  const walk = (id: number, depth: number) => {
    const children = (byId.get(id)!.children ?? [])
      .map((c) => ({ c, n: inclusive.get(c) ?? 0 }))
      .filter(({ n }) => busy > 0 && n / busy >= minShare)
      .sort((a, b) => b.n - a.n);
    for (const { c, n } of children) {
      const node = byId.get(c)!;
      if (node.callFrame.functionName === '(idle)') continue;
      lines.push(`${(100 * n / busy).toFixed(1).padStart(5)}% ${'│ '.repeat(depth)}${label(node)}`);
      if (depth < MAX_DEPTH) walk(c, depth + 1);
    }
  };
  walk(root.id, 0);
  return lines;
}
