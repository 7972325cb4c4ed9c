/**
 * The lint rule that keeps test support out of production code (eslint.config.js), run on made-up
 * files: in lib/ and apps/ test support is a `testutil/` folder, so no name lets a production file
 * import it, and no name makes a file elsewhere test support (a `testing-*.ts`, `*.suite.ts` or
 * `contract.ts` beside the code is production code like any other). The tree itself is checked too:
 * the old names of test support are found nowhere outside a `testutil/` folder.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const eslint = new ESLint({ cwd: ROOT });

async function problemsOf(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return result!.messages.map((m) => `${m.ruleId}: ${m.message}`);
}

const TESTUTIL_IMPORT = "import { startApiHarness } from '../testutil/harness.ts';\nexport const harness = startApiHarness;\n";
const LIB_TESTUTIL_IMPORT = "import { plans } from './testutil/stores.ts';\nexport const p = plans;\n";
const VITEST_IMPORT = "import { describe } from 'vitest';\nexport const d = describe;\n";
const REFUSED = /production code does not import (test support|the test runner)/;

describe('test support stays out of production code', () => {
  it.each(['apps/api/routes/example.ts', 'apps/api/routes/testing-example.ts', 'apps/api/routes/contract.ts', 'apps/api/routes/example.suite.ts'])(
    '%s may not import apps/api/testutil/',
    async (file) => {
      expect((await problemsOf(file, TESTUTIL_IMPORT)).join('\n')).toMatch(REFUSED);
    },
  );

  it.each(['lib/access/x.ts', 'lib/access/testing.ts', 'lib/access/store.suite.ts', 'lib/prediction/x.ts'])(
    "%s may not import its folder's testutil/",
    async (file) => {
      expect((await problemsOf(file, LIB_TESTUTIL_IMPORT)).join('\n')).toMatch(REFUSED);
    },
  );

  it('a shared suite in a testutil/ folder may not be imported by production code, whatever folder it is in', async () => {
    const code = "import { pushSuite } from '../../push/testutil/push.suite.ts';\nexport const suite = pushSuite;\n";
    expect((await problemsOf('lib/access/x.ts', code)).join('\n')).toMatch(REFUSED);
    const shared = "import { makePoll } from '../../../lib/testutil/polls.ts';\nexport const poll = makePoll;\n";
    expect((await problemsOf('apps/api/routes/example.ts', shared)).join('\n')).toMatch(REFUSED);
  });

  const ESCAPES = [
    'lib/foo/testing-x.ts', 'lib/foo/testing.ts', 'lib/foo/x.suite.ts', 'lib/foo/fixture.ts',
    'lib/foo/testing/x.ts', 'lib/testing/x.ts', 'lib/prediction/testing-x.ts',
  ];
  it.each(ESCAPES)(
    '%s is production code by its place, whatever its name: it may not import vitest',
    async (file) => {
      expect((await problemsOf(file, VITEST_IMPORT)).join('\n')).toMatch(REFUSED);
    },
  );

  it('tests and test support may import it', async () => {
    expect(await problemsOf('apps/api/routes/example.test.ts', TESTUTIL_IMPORT)).toEqual([]);
    expect(await problemsOf('apps/api/testutil/other.ts', "import { startApiHarness } from './harness.ts';\nexport const h = startApiHarness;\n")).toEqual([]);
    expect(await problemsOf('lib/access/x.test.ts', LIB_TESTUTIL_IMPORT)).toEqual([]);
    expect(await problemsOf('lib/access/testutil/x.suite.ts', "import { plans } from './stores.ts';\nexport const p = plans;\n")).toEqual([]);
    expect(await problemsOf('lib/access/testutil/crash-child.ts', VITEST_IMPORT)).toEqual([]);
    expect(await problemsOf('lib/testutil/x.ts', VITEST_IMPORT)).toEqual([]);
  });
});

/** Names test support used to have beside production code (a `testing/` folder is checked by name below). */
const SUPPORT_NAME = /\.suite\.ts$|^testing.*\.ts$|^fixture.*\.ts$/;

/** Files and folders under `dir` (relative to `root`) that look like test support outside a `testutil/` folder. */
function strayTestSupport(root: string, dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name === 'testutil' || entry.name === 'node_modules') continue;
      if (entry.name === 'testing') found.push(`${path}/`);
      found.push(...strayTestSupport(root, path));
    } else if (SUPPORT_NAME.test(entry.name)) {
      found.push(path);
    }
  }
  return found;
}

describe('test support lives in testutil/ folders only', () => {
  it('no *.suite.ts, testing*.ts, fixture*.ts or testing/ folder in lib/ or apps/ outside a testutil/ folder', () => {
    expect([...strayTestSupport(ROOT, 'lib'), ...strayTestSupport(ROOT, 'apps')]).toEqual([]);
  });

  it('the walk finds each old name outside testutil/ and nothing inside it', () => {
    const root = mkdtempSync(join(tmpdir(), 'stray-support-'));
    try {
      const files = [
        'lib/foo/x.ts', 'lib/foo/testing-x.ts', 'lib/foo/x.suite.ts', 'lib/foo/fixture.ts', 'lib/foo/testing/a.ts',
        'lib/foo/testutil/testing-y.ts', 'lib/foo/testutil/y.suite.ts', 'lib/testutil/fixture.ts',
      ];
      for (const file of files) {
        mkdirSync(dirname(join(root, file)), { recursive: true });
        writeFileSync(join(root, file), '');
      }
      expect(strayTestSupport(root, 'lib').sort()).toEqual(['lib/foo/fixture.ts', 'lib/foo/testing-x.ts', 'lib/foo/testing/', 'lib/foo/x.suite.ts']);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
