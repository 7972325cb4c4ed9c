/**
 * No import cycles between the folders of production code (lib/<folder>, apps/<app>): each folder
 * depends on others in one direction only. Test support (`*.test.ts`, `*.suite.ts`, `testing*.ts`,
 * `testing/` folders, test/) is left out: it may import anything, nothing in production imports it
 * (eslint.config.js).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

function productionFiles(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'testing' && entry.name !== 'fixtures') found.push(...productionFiles(path));
    } else if (entry.name.endsWith('.ts') && !/\.test\.ts$|\.suite\.ts$|^testing/.test(entry.name)) {
      found.push(path);
    }
  }
  return found;
}

/** lib/clickhouse/writer.ts → lib/clickhouse */
const folderOf = (path: string) => path.split('/').slice(0, 2).join('/');

function folderGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of [...productionFiles('lib'), ...productionFiles('apps')]) {
    const from = folderOf(file);
    for (const [, spec] of readFileSync(join(ROOT, file), 'utf8').matchAll(/from '(\.[^']+)'/g)) {
      const to = folderOf(relative(ROOT, normalize(join(ROOT, dirname(file), spec!))));
      if (to !== from) graph.set(from, (graph.get(from) ?? new Set()).add(to));
    }
  }
  return graph;
}

/** One cycle per strongly connected group of folders, as the path that closes it. */
function cycles(graph: Map<string, Set<string>>): string[] {
  const found = new Set<string>();
  const visit = (node: string, path: string[]) => {
    for (const next of graph.get(node) ?? []) {
      const at = path.indexOf(next);
      if (at >= 0) {
        const cycle = path.slice(at);
        const start = cycle.indexOf([...cycle].sort()[0]!);
        found.add([...cycle.slice(start), ...cycle.slice(0, start)].join(' → '));
      } else if (path.length < 12) {
        visit(next, [...path, next]);
      }
    }
  };
  for (const node of graph.keys()) visit(node, [node]);
  return [...found].sort();
}

describe('imports', () => {
  it('production folders import each other without cycles', () => {
    const graph = folderGraph();
    expect(graph.get('lib/pipeline')?.has('lib/clickhouse')).toBe(true);
    expect(cycles(graph)).toEqual([]);
  });
});
