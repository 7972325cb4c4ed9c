/**
 * Every relative link of the documentation resolves: the file exists, and a `#anchor` names a
 * heading of the target as GitHub slugs it. A moved section or a renamed heading fails here, not in
 * a reader's browser.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import type { Tokens } from 'marked';
import { describe, expect, it } from 'vitest';
import { allTokens, anchorsOf, documentationFiles, ROOT } from './support/markdown.ts';

const EXTERNAL = /^[a-z][a-z0-9+.-]*:/i;

function brokenLinks(file: string): string[] {
  const broken: string[] = [];
  for (const token of allTokens(file)) {
    if (token.type !== 'link' && token.type !== 'image') continue;
    const href = (token as Tokens.Link).href;
    if (EXTERNAL.test(href)) continue;
    const [path = '', anchor] = href.split('#');
    const target = path === '' ? file : normalize(join(dirname(file), decodeURIComponent(path)));
    if (!existsSync(join(ROOT, target))) {
      broken.push(`${href}: no file ${target}`);
      continue;
    }
    if (anchor !== undefined && !(target.endsWith('.md') && anchorsOf(target).has(decodeURIComponent(anchor)))) {
      broken.push(`${href}: no heading #${anchor} in ${target}`);
    }
  }
  return broken;
}

describe('documentation links', () => {
  const files = documentationFiles();

  it('finds the README and the pages of every reader', () => {
    for (const reader of ['integrators', 'operators', 'analysts', 'engineers']) {
      expect(files).toContain(`docs/${reader}/README.md`);
    }
  });

  it.each(files)('%s: every relative link and anchor resolves', (file) => {
    expect(brokenLinks(file)).toEqual([]);
  });

  it('the README takes a reader to the three most asked places in one click', () => {
    const links = allTokens('README.md').filter((t) => t.type === 'link').map((t) => (t as Tokens.Link).href);
    expect(links).toEqual(expect.arrayContaining([
      'docs/integrators/push.md#receiving-webhooks-on-your-own-machine',
      'docs/operators/running.md#run-two-normalizers',
      'docs/analysts/README.md#query-lane-statistics',
    ]));
  });

  it('the README stays a door: at most 150 lines, and it names the one test command', () => {
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8').trimEnd().split('\n').length).toBeLessThanOrEqual(150);
    expect(allTokens('README.md').some((t) => t.type === 'code' && (t as Tokens.Code).text.trim() === 'npm test')).toBe(true);
  });

  it('every page of docs/ says whom it is for', () => {
    const pages = files.filter((f) => f.startsWith('docs/'));
    const silent = pages.filter((f) => !allTokens(f).some((t) => t.type === 'strong' && /^For /.test((t as Tokens.Strong).text)));
    expect(silent).toEqual([]);
  });
});
