import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedKv } from '../kv/index.ts';
import { crashSuite } from './testutil/crash.suite.ts';

// The journal under a DATA_DIR: the killed process's writes are what the restart reads.
crashSuite({
  name: 'embedded',
  async create() {
    const dir = await mkdtemp(join(tmpdir(), 'analyzer-crash-'));
    return { child: { kind: 'embedded', dir }, open: () => new EmbeddedKv(dir), cleanup: () => rm(dir, { recursive: true, force: true }) };
  },
});
