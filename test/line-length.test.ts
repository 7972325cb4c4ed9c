/**
 * Production code reads without sideways scrolling: no line of lib/ or apps/ (tests and test
 * support aside) is longer than 160 characters. A rule of the tree rather than an eslint
 * rule: eslint 10 has no core max-len, and one plain check needs no formatting plug-in.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const MAX_LINE = 160;
const TEST_SUPPORT = /\.test\.ts$|\.suite\.ts$|^testing|(^|\/)(testing|testutil|fixtures)\//;

function productionFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((path) => path.endsWith('.ts') && !TEST_SUPPORT.test(path) && !TEST_SUPPORT.test(path.split('/').pop()!))
    .map((path) => join(dir, path));
}

describe('line length', () => {
  it(`no production line is longer than ${MAX_LINE} characters`, () => {
    const files = [...productionFiles('lib'), ...productionFiles('apps')];
    expect(files.length).toBeGreaterThan(200);
    const long = files.flatMap((file) => readFileSync(join(ROOT, file), 'utf8').split('\n')
      .flatMap((line, i) => (line.length > MAX_LINE ? [`${file}:${i + 1} (${line.length})`] : [])));
    expect(long).toEqual([]);
  });
});
