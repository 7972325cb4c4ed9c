/**
 * `npm run client:generate`: builds the API app on a throwaway embedded store (no service, no
 * network), takes its generated OpenAPI document and writes the client's types (src/schema.ts).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../../../apps/api/app.ts';
import { createApiRuntime } from '../../../apps/api/context/runtime.ts';
import { DEFAULT_CONFIG_DIR, loadEnv } from '../../../lib/config/index.ts';
import { SCHEMA_FILE, clientTypes } from './types.ts';

const dataDir = await mkdtemp(join(tmpdir(), 'client-generate-'));
try {
  const env = loadEnv({ DATA_DIR: dataDir, ADMIN_TOKEN: 'client-generate-only-0123456789abcdef', LOG_LEVEL: 'silent', CONFIG_DIR: DEFAULT_CONFIG_DIR });
  const runtime = await createApiRuntime(env, { sandboxUrl: null, liveTarget: 'sandbox' });
  try {
    const app = await buildApp(runtime.deps);
    await app.ready();
    await writeFile(SCHEMA_FILE, await clientTypes(app.apiDocuments().public));
    await app.close();
  } finally {
    await runtime.close();
  }
  console.log(`wrote ${SCHEMA_FILE.pathname}`);
} finally {
  await rm(dataDir, { recursive: true, force: true });
}
