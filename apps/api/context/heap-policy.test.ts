import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { COMPILE_CACHE_FLAGS } from '../../../lib/process/start-flags.ts';
import { HEAP_POLICY_FLAGS, MALLOC_POLICY_ENV } from './heap-policy.ts';

describe('heap policy', () => {
  it('is a node flag of the npm start command', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> };
    // The malloc policy's variable first (the operator's own value kept), then node.
    const start = pkg.scripts.start!.split(/\s+/);
    expect(start[0]).toBe(`GLIBC_TUNABLES=\${GLIBC_TUNABLES:-${MALLOC_POLICY_ENV.GLIBC_TUNABLES}}`);
    expect(start[1]).toBe('node');
    const script = start.indexOf('apps/embedded/main.ts');
    for (const flag of HEAP_POLICY_FLAGS) {
      expect(start.indexOf(flag), flag).toBeGreaterThan(0);
      expect(start.indexOf(flag), `${flag} before the script`).toBeLessThan(script);
    }
  });

  it('npm start preloads the compile cache, as the forks of it pass it', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> };
    const start = pkg.scripts.start!;
    expect(start).toContain(` ${COMPILE_CACHE_FLAGS.join(' ')} apps/embedded/main.ts`);
  });
});
