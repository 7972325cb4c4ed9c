/** An unset ADMIN_TOKEN is generated once and kept in DATA_DIR (mode 0600); ADMIN_TOKEN always wins. */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { adminTokenOf, adminTokenPath, keptAdminToken } from './admin-token.ts';

describe('the admin token', () => {
  const dirs: string[] = [];
  const dataDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'admin-token-'));
    dirs.push(dir);
    return join(dir, 'data');
  };
  afterEach(() => { for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true }); });

  it('generated at the first start, written with mode 0600, the same at every later start', () => {
    const dir = dataDir();
    expect(keptAdminToken(dir)).toBeNull();
    const first = adminTokenOf(undefined, dir);
    expect(first).toEqual({ token: expect.stringMatching(/^[A-Za-z0-9_-]{32}$/), source: 'created', file: adminTokenPath(dir) });
    expect(statSync(adminTokenPath(dir)).mode & 0o777).toBe(0o600);
    expect(readFileSync(adminTokenPath(dir), 'utf8')).toBe(`${first.token}\n`);
    const later = adminTokenOf(undefined, dir);
    expect(later).toEqual({ token: first.token, source: 'kept', file: adminTokenPath(dir) });
    expect(keptAdminToken(dir)).toBe(first.token);
  });

  it('ADMIN_TOKEN wins and writes nothing', () => {
    const dir = dataDir();
    expect(adminTokenOf('from-the-environment-0123456789', dir)).toEqual({ token: 'from-the-environment-0123456789', source: 'environment', file: null });
    expect(keptAdminToken(dir)).toBeNull();
    adminTokenOf(undefined, dir);
    expect(adminTokenOf('from-the-environment-0123456789', dir).token).toBe('from-the-environment-0123456789');
  });
});
