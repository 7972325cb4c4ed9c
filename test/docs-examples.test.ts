/**
 * The integrators' examples answer as shown. A runnable example is a fenced block with the info
 * string `sh example`, followed by a `json <status>` block of the answer; this test starts the
 * embedded default in-process (the API harness: its sandbox carriers, its store, loopback opened to
 * webhooks as `WEBHOOK_ALLOWED_TARGETS=127.0.0.1/32 npm start` does), runs each example with curl
 * as written, with `$B` the base URL, `$K` a fresh `trk_test_` growth key, and `$W` / `$A` the
 * `wh_` / `an_` id an earlier example's answer gave (an endpoint, an analysis), and compares the status and the fields shown: objects may
 * hold more fields than shown; a shown array has exactly the shown elements, in order (an empty one
 * stands for any array).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Tokens } from 'marked';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SECOND_MS } from '../lib/time/index.ts';
import { startApiHarness, type ApiHarness } from '../apps/api/testutil/harness.ts';
import { allTokens, documentationFiles } from './support/markdown.ts';

const run = promisify(execFile);

/** Pages whose examples must run: the README's first lookup, every integrators' page and the operators' pages. */
const PAGES = documentationFiles().filter((f) => f === 'README.md' || f.startsWith('docs/integrators/') || f.startsWith('docs/operators/'));
/** The operators' pages: also commands with no HTTP answer (`sh example` alone: test/docs-operators.services.test.ts runs them). */
const COMMAND_PAGES = (page: string) => page.startsWith('docs/operators/');
/** curl's own write-out appends the status after this marker, leaving the example's text untouched. */
const STATUS_MARK = '|http_status=';

interface Example { page: string; command: string; status: number; shown: unknown }

function examplesOf(page: string): Example[] {
  const blocks = allTokens(page).filter((t): t is Tokens.Code => t.type === 'code');
  const examples: Example[] = [];
  blocks.forEach((block, i) => {
    if (block.lang !== 'sh example') return;
    const answer = blocks[i + 1];
    const status = /^json (\d{3})$/.exec(answer?.lang ?? '');
    if (!status && COMMAND_PAGES(page)) return;
    if (!answer || !status) throw new Error(`${page}: the example "${block.text}" has no \`json <status>\` block after it`);
    examples.push({ page, command: block.text, status: Number(status[1]), shown: JSON.parse(answer.text) });
  });
  return examples;
}

/** The shown answer as a matcher: extra fields allowed, arrays element by element. */
function asShown(value: unknown): unknown {
  if (Array.isArray(value)) return value.length === 0 ? expect.any(Array) : value.map(asShown);
  if (value !== null && typeof value === 'object') {
    return expect.objectContaining(Object.fromEntries(Object.entries(value).map(([k, v]) => [k, asShown(v)])));
  }
  return value;
}

const EXAMPLES = PAGES.flatMap(examplesOf);

describe('examples of the integrators\' pages', () => {
  let harness: ApiHarness;
  let curlHome: string;
  const vars: Record<string, string> = {};

  beforeAll(async () => {
    harness = await startApiHarness();
    vars.B = await harness.listen();
    // A growth key: the analyzer's examples need its plan, and every other example answers the same.
    vars.K = (await harness.createKey({ plan: 'growth' })).key;
    curlHome = await mkdtemp(join(tmpdir(), 'docs-curl-'));
    await writeFile(join(curlHome, '.curlrc'), `write-out = "${STATUS_MARK}%{http_code}"\n`);
  }, 120_000);

  afterAll(async () => {
    await harness?.close();
    if (curlHome) await rm(curlHome, { recursive: true, force: true });
  });

  it('every curl or npm run block on those pages is a runnable example (operators\' pages: or marked not-run with a reason), and there are a few', () => {
    const unmarked = PAGES.flatMap((page) => allTokens(page)
      .filter((t): t is Tokens.Code => t.type === 'code' && t.lang !== 'sh example' && !(COMMAND_PAGES(page) && /^sh not-run: \S/.test(t.lang ?? '')) && /\b(curl|npm run)\b/.test(t.text))
      .map((t) => `${page}: ${t.text.split('\n')[0]}`));
    expect(unmarked).toEqual([]);
    expect(EXAMPLES.filter((e) => COMMAND_PAGES(e.page)).length).toBeGreaterThanOrEqual(2);
    expect(EXAMPLES.length).toBeGreaterThanOrEqual(10);
  });

  it.each(EXAMPLES.map((e) => [`${e.page}: ${e.command.split('\n')[0]}`, e] as const))('%s', async (_title, example) => {
    // A reader types one command a second or slower; the plan's burst limit counts per second.
    harness.clock.advance(SECOND_MS);
    const { stdout } = await run('sh', ['-c', example.command], { env: { ...process.env, ...vars, CURL_HOME: curlHome } });
    const at = stdout.lastIndexOf(STATUS_MARK);
    expect(at, stdout).toBeGreaterThanOrEqual(0);
    const body = stdout.slice(0, at);
    expect({ status: Number(stdout.slice(at + STATUS_MARK.length)), body }).toMatchObject({ status: example.status });
    const answer: unknown = JSON.parse(body);
    expect(answer).toEqual(asShown(example.shown));
    const id = (answer as { id?: unknown }).id;
    if (typeof id === 'string' && id.startsWith('wh_')) vars.W = id;
    if (typeof id === 'string' && id.startsWith('an_')) vars.A = id;
  });
});
