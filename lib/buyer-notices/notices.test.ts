import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedKv } from '../kv/index.ts';
import { noticesSuite } from './testutil/notices.suite.ts';

noticesSuite({
  name: 'embedded store',
  async open() {
    const dir = await mkdtemp(join(tmpdir(), 'notices-'));
    const kv = new EmbeddedKv(dir);
    return { kv, async cleanup() { await kv.close(); await rm(dir, { recursive: true, force: true }); } };
  },
});
