/**
 * The lint rule that keeps test support out of production code (eslint.config.js), run on made-up
 * files: in apps/ test support is the `testutil/` folder, so no name lets a production file import it
 * (a `testing-*.ts` or `contract.ts` beside the routes is production code like any other).
 */
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const eslint = new ESLint({ cwd: new URL('../', import.meta.url).pathname });

async function problemsOf(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return result!.messages.map((m) => `${m.ruleId}: ${m.message}`);
}

const TESTUTIL_IMPORT = "import { startApiHarness } from '../testutil/harness.ts';\nexport const harness = startApiHarness;\n";

describe('test support stays out of production code', () => {
  it.each(['apps/api/routes/example.ts', 'apps/api/routes/testing-example.ts', 'apps/api/routes/contract.ts', 'apps/api/routes/example.suite.ts'])(
    '%s may not import apps/api/testutil/',
    async (file) => {
      expect((await problemsOf(file, TESTUTIL_IMPORT)).join('\n')).toMatch(/production code does not import test support/);
    },
  );

  it('a shared suite may not be imported by production code either, whatever folder it is in', async () => {
    const code = "import { pushSuite } from '../other/push.suite.ts';\nexport const suite = pushSuite;\n";
    expect((await problemsOf('apps/api/routes/example.ts', code)).join('\n')).toMatch(/production code does not import test support/);
  });

  it('tests and test support may import it', async () => {
    expect(await problemsOf('apps/api/routes/example.test.ts', TESTUTIL_IMPORT)).toEqual([]);
    expect(await problemsOf('apps/api/testutil/other.ts', "import { startApiHarness } from './harness.ts';\nexport const h = startApiHarness;\n")).toEqual([]);
  });
});
