/**
 * Production code reads without sideways scrolling: no line of lib/ or apps/ (tests and test
 * support aside) is longer than 160 characters. A rule of the tree rather than an eslint
 * rule: eslint 10 has no core max-len, and one plain check needs no formatting plug-in.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, productionFiles } from './support/production-files.ts';

const MAX_LINE = 160;

describe('line length', () => {
  it(`no production line is longer than ${MAX_LINE} characters`, () => {
    const files = [...productionFiles('lib'), ...productionFiles('apps')];
    expect(files.length).toBeGreaterThan(200);
    const long = files.flatMap((file) => readFileSync(join(ROOT, file), 'utf8').split('\n')
      .flatMap((line, i) => (line.length > MAX_LINE ? [`${file}:${i + 1} (${line.length})`] : [])));
    expect(long).toEqual([]);
  });
});
