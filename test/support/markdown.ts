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
