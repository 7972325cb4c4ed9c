/**
 * No import cycles in production code, at two scales:
 * - between folders (lib/<folder>, apps/<app>): each folder depends on others in one direction only;
 * - between files (every production .ts file of lib/, apps/, bench/ and packages/<name>/src/, and
 *   whatever they import): a module that imports one that imports it back may see the other's
 *   bindings before they are initialised, and the pair can only be understood together.
 * Type-only imports count: they tie the files together for a reader just the same.
 * Test support (`*.test.ts`, `testutil/` folders, test/)
 * is not a starting point: it may import anything, nothing in production imports it (eslint.config.js).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, productionFiles } from './support/production-files.ts';

/** packages/<name>/src of every package there is. */
const packageSources = () => (existsSync(join(ROOT, 'packages')) ? readdirSync(join(ROOT, 'packages')).map((name) => `packages/${name}/src`) : []);

/** `from './x.ts'`, `import './x.ts'`, `import('./x.ts')`: the relative files a file imports, from the repository root. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  return [...text.matchAll(/\b(?:from|import)\s*\(?\s*['"](\.[^'"]+)['"]/g)].map(([, spec]) => relative(ROOT, normalize(join(ROOT, dirname(file), spec!))));
}

/** The import graph of `starts` and of every file they reach (so a cycle through a helper they import is seen too). */
function fileGraph(starts: string[]): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  const todo = [...starts];
  for (let file = todo.pop(); file !== undefined; file = todo.pop()) {
    if (graph.has(file) || !existsSync(join(ROOT, file))) continue;
    const targets = new Set(importsOf(file));
    graph.set(file, targets);
    todo.push(...targets);
  }
  return graph;
}

/** lib/clickhouse/writer.ts → lib/clickhouse */
const folderOf = (path: string) => path.split('/').slice(0, 2).join('/');

function folderGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of [...productionFiles('lib'), ...productionFiles('apps')]) {
    const from = folderOf(file);
    for (const to of importsOf(file).map(folderOf)) {
      if (to !== from) graph.set(from, (graph.get(from) ?? new Set()).add(to));
    }
  }
  return graph;
}

/** Strongly connected groups of more than one node, or of one that imports itself (Tarjan). */
function tangles(graph: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const visit = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const group: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      group.push(member);
    } while (member !== node);
    if (group.length > 1 || graph.get(node)?.has(node)) groups.push(group.sort());
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return groups;
}

/** The shortest way from a group's first node back to itself, inside the group (breadth first). */
function shortestCycle(graph: Map<string, Set<string>>, group: string[]): string[] {
  const start = group[0]!;
  const inGroup = new Set(group);
  const cameFrom = new Map<string, string>();
  const queue = [start];
  for (let at = 0; at < queue.length; at++) {
    const node = queue[at]!;
    for (const next of [...(graph.get(node) ?? [])].sort()) {
      if (next === start) {
        const path = [node];
        while (path[0] !== start) path.unshift(cameFrom.get(path[0]!)!);
        return [...path, start];
      }
      if (inGroup.has(next) && !cameFrom.has(next)) {
        cameFrom.set(next, node);
        queue.push(next);
      }
    }
  }
  return [start, start];
}

/** One line per tangle: a cycle that shows it, and the other files caught in it. */
function cycles(graph: Map<string, Set<string>>): string[] {
  return tangles(graph).map((group) => {
    const cycle = shortestCycle(graph, group);
    const others = group.filter((node) => !cycle.includes(node));
    return cycle.join(' → ') + (others.length ? ` (the same tangle also holds ${others.join(', ')})` : '');
  }).sort();
}

describe('imports', () => {
  it('production folders import each other without cycles', () => {
    const graph = folderGraph();
    expect(graph.get('lib/pipeline')?.has('lib/clickhouse')).toBe(true);
    expect(cycles(graph)).toEqual([]);
  });

  it('production files import each other without cycles', () => {
    const starts = ['lib', 'apps', 'bench', ...packageSources()].flatMap(productionFiles);
    const graph = fileGraph(starts);
    expect(starts).toContain('bench/api.ts');
    expect(graph.get('apps/cli/main.ts')).toContain('apps/cli/commands/cli.ts');
    expect(cycles(graph)).toEqual([]);
  });

  it('reports a cycle as the path that closes it', () => {
    const graph = new Map([
      ['a.ts', new Set(['b.ts'])], ['b.ts', new Set(['c.ts', 'd.ts'])], ['c.ts', new Set(['a.ts'])], ['d.ts', new Set(['b.ts'])], ['e.ts', new Set(['e.ts'])],
    ]);
    expect(cycles(graph)).toEqual(['a.ts → b.ts → c.ts → a.ts (the same tangle also holds d.ts)', 'e.ts → e.ts']);
  });
});
