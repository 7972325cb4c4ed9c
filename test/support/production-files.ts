/**
 * The production .ts files under a folder, as the repository-wide checks see them (import cycles,
 * line length): test support is left out — `*.test.ts` and the `testutil/` and `fixtures/` folders
 * (eslint.config.js keeps production from importing them). Any other file is production code, whatever its name.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

const SUPPORT_FOLDERS = ['testutil', 'fixtures', 'node_modules'];
const SUPPORT_FILE = /\.test\.ts$/;

/** Paths from the repository root; none when `dir` does not exist. */
export function productionFiles(dir: string): string[] {
  if (!existsSync(join(ROOT, dir))) return [];
  const found: string[] = [];
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SUPPORT_FOLDERS.includes(entry.name)) found.push(...productionFiles(path));
    } else if (entry.name.endsWith('.ts') && !SUPPORT_FILE.test(entry.name)) {
      found.push(path);
    }
  }
  return found;
}
