import { describe, expect, it } from 'vitest';
import { parseRedisUrl } from './connect.ts';

describe('REDIS_URL', () => {
  it('names one server with any redis:// or rediss:// URL', () => {
    expect(parseRedisUrl('redis://127.0.0.1:6380/2')).toEqual({ kind: 'single', url: 'redis://127.0.0.1:6380/2' });
    expect(parseRedisUrl('rediss://u:p@cache.example:6380')).toEqual({ kind: 'single', url: 'rediss://u:p@cache.example:6380' });
  });

  it('names a cluster by its seed nodes with redis+cluster://, credentials optional', () => {
    expect(parseRedisUrl('redis+cluster://127.0.0.1:7000,127.0.0.1:7001')).toEqual({
      kind: 'cluster', nodes: [{ host: '127.0.0.1', port: 7000 }, { host: '127.0.0.1', port: 7001 }],
    });
    expect(parseRedisUrl('redis+cluster://app:s%40cret@[::1]:7000')).toEqual({
      kind: 'cluster', nodes: [{ host: '::1', port: 7000 }], username: 'app', password: 's@cret',
    });
  });

  it('refuses a cluster URL without host:port nodes, naming the expected form', () => {
    expect(() => parseRedisUrl('redis+cluster://node-a,node-b')).toThrow(/cluster node 'node-a' is not host:port/);
    expect(() => parseRedisUrl('redis+cluster://')).toThrow(/names no node/);
  });
});
