import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { settleCrashSuite } from './testutil/settle-crash.suite.ts';

settleCrashSuite('embedded', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'settle-crash-'));
  return { backend: { kind: 'embedded', dataDir }, dispose: () => rm(dataDir, { recursive: true, force: true }) };
});
