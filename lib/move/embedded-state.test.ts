/**
 * A start against the services beside an embedded store nobody moved says so (the banner's line);
 * once `store move` has written its marker, or when DATA_DIR holds no store, it says nothing.
 */
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EmbeddedAccessStore } from '../access/index.ts';
import { DEFAULT_CONFIG_DIR, loadPlans } from '../config/index.ts';
import { embeddedStoreDirs, unmovedEmbeddedState, unmovedStoreNotice, writeMovedMarker } from './embedded-state.ts';

describe('an unmoved embedded store beside a start against the services', () => {
  const dirs: string[] = [];
  const dataDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'unmoved-'));
    dirs.push(dir);
    return dir;
  };
  afterEach(() => { for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true }); });

  it('an empty or missing DATA_DIR, or one with only a spool: nothing to say', () => {
    const dir = dataDir();
    expect(unmovedStoreNotice(dir, { pollLog: true })).toBeNull();
    expect(unmovedStoreNotice(join(dir, 'absent'), { pollLog: true })).toBeNull();
    appendFileSync(join(dir, 'polls.ndjson'), '');
    expect(unmovedEmbeddedState(dir)).toEqual([]);
  });

  it('keys and a raw-poll log: named, with the command to move them; after the move, nothing', async () => {
    const dir = dataDir();
    const store = new EmbeddedAccessStore({ plans: loadPlans(DEFAULT_CONFIG_DIR), dir: embeddedStoreDirs(dir).access });
    await store.createKey({ plan: 'trial', mode: 'test', email: 'a@example.com' }, new Date());
    await store.close();
    appendFileSync(join(dir, 'polls.ndjson'), '{}\n');
    // With Redis alone the embedded pipeline still reads the log: only the keys are named.
    expect(unmovedEmbeddedState(dir, { pollLog: false })).toEqual(['keys']);
    expect(unmovedStoreNotice(dir, { pollLog: true })).toBe(`${dir} holds an embedded store that was not moved here (keys, the raw-poll log): its keys answer ` +
      'invalid_api_key. Stop this start and run npm run cli -- store move (docs/operators/running.md)');
    // Moved without Kafka: the keys are in Redis, the log is still to be sent.
    const marker = { moved_at: new Date().toISOString(), redis: 'redis://127.0.0.1:6379', kafka: null, namespace: 'trk:', topic: null, polls_moved: false };
    writeMovedMarker(dir, marker);
    expect(unmovedEmbeddedState(dir, { pollLog: true })).toEqual(['the raw-poll log']);
    expect(unmovedStoreNotice(dir, { pollLog: false })).toBeNull();
    writeMovedMarker(dir, { ...marker, kafka: '127.0.0.1:9092', topic: 't', polls_moved: true });
    expect(unmovedStoreNotice(dir, { pollLog: true })).toBeNull();
  });
});
