import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedKv } from '../kv/index.ts';
import { runnerSuite } from './testutil/runner.suite.ts';

// One process holds the embedded store: both runners share its one handle.
runnerSuite({
  name: 'embedded',
  async open() {
    const dir = await mkdtemp(join(tmpdir(), 'analyzer-runner-'));
    const kv = new EmbeddedKv(dir);
    return { kvs: [kv, kv], async cleanup() { await kv.close(); await rm(dir, { recursive: true, force: true }); } };
  },
});
