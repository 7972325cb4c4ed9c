import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedKv } from '../kv/index.ts';
import { runningLateSuite } from './testutil/running-late.suite.ts';

runningLateSuite('embedded', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'push-late-'));
  const kv = new EmbeddedKv(dir);
  return { kv, async cleanup() { await kv.close(); rmSync(dir, { recursive: true, force: true }); } };
});
