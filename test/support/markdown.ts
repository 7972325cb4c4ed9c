/**
 * Reading the project's Markdown as GitHub shows it: the documentation files, their tokens (marked's
 * lexer, not regexes) and their headings' anchors (github-slugger, the algorithm github.com uses).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import GithubSlugger from 'github-slugger';
import { Lexer, walkTokens, type Token, type Tokens } from 'marked';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function markdownUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : markdownUnder(path);
    return entry.name.endsWith('.md') ? [path] : [];
  });
}

/**
 * The documentation a reader follows links through: README.md, docs/**, and the README.md beside
 * the code (packages/*, lib/*, scripts/*: the design notes the pages point to).
 */
export function documentationFiles(): string[] {
  const besideCode = ['packages', 'lib', 'scripts']
    .flatMap((dir) => markdownUnder(join(ROOT, dir)))
    .filter((path) => path.endsWith('/README.md'));
  return [join(ROOT, 'README.md'), ...markdownUnder(join(ROOT, 'docs')), ...besideCode]
    .map((path) => relative(ROOT, path));
}

export function tokensOf(file: string): Token[] {
  return new Lexer({ gfm: true }).lex(readFileSync(join(ROOT, file), 'utf8'));
}

/** Every token of a file, nested ones included, in document order. */
export function allTokens(file: string): Token[] {
  const found: Token[] = [];
  walkTokens(tokensOf(file), (token) => {
    found.push(token);
  });
  return found;
}

/** A heading's text as rendered (code spans and emphasis reduced to their text), which GitHub slugs. */
function plainText(tokens: Token[] | undefined): string {
  return (tokens ?? []).map((token) => {
    if ('tokens' in token && token.tokens) return plainText(token.tokens);
    return 'text' in token ? String(token.text) : '';
  }).join('');
}

/** The anchors GitHub gives the headings of a file (a repeated heading gets `-1`, `-2`, ...). */
export function anchorsOf(file: string): Set<string> {
  const slugger = new GithubSlugger();
  return new Set(allTokens(file)
    .filter((token): token is Tokens.Heading => token.type === 'heading')
    .map((heading) => slugger.slug(plainText(heading.tokens))));
}

/**
 * A page's shell blocks, as the docs' tests classify them: `sh example` followed by a `json <status>`
 * block (an HTTP answer, test/docs-examples.test.ts), `sh example` alone (a command that must
 * succeed, test/docs-operators.services.test.ts), `sh not-run: <reason>` (cannot run in a test: the
 * reason says why), or unmarked (a test fails on it, so no new command slips in untested).
 */
export type ShellBlock =
  | { kind: 'answered'; command: string; status: number; shown: string }
  | { kind: 'command'; command: string }
  | { kind: 'not-run'; command: string; reason: string }
  | { kind: 'unmarked'; command: string; lang: string };

export function shellBlocks(file: string): ShellBlock[] {
  const blocks = allTokens(file).filter((t): t is Tokens.Code => t.type === 'code');
  const found: ShellBlock[] = [];
  blocks.forEach((block, i) => {
    const lang = block.lang ?? '';
    if (lang === 'sh example') {
      const status = /^json (\d{3})$/.exec(blocks[i + 1]?.lang ?? '');
      found.push(status ? { kind: 'answered', command: block.text, status: Number(status[1]), shown: blocks[i + 1]!.text } : { kind: 'command', command: block.text });
    } else if (lang.startsWith('sh not-run:')) {
      found.push({ kind: 'not-run', command: block.text, reason: lang.slice('sh not-run:'.length).trim() });
    } else if (/^(sh|bash|shell|console|zsh)\b/.test(lang) || (lang === '' && /\b(npm|npx|curl|node|docker|kill|export)\b/.test(block.text))) {
      found.push({ kind: 'unmarked', command: block.text, lang });
    }
  });
  return found;
}
