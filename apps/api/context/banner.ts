/** `npm run api`'s banner: where it listens, what it uses, and how to make a first key. */
import type { Env } from '../../../lib/config/index.ts';
import { unmovedStoreNotice } from '../../../lib/move/index.ts';
import { redactUrl, serviceLines, type Banner } from '../../../lib/process/banner.ts';
import { adminTokenLine } from '../../../lib/config/index.ts';

export function apiBanner(env: Env, api: { url: string; adminToken: string; adminTokenGenerated: boolean; adminTokenFile: string | null }): Banner {
  const port = Number(new URL(api.url).port);
  // The CLI calls http://127.0.0.1:$PORT (default 3000): name the URL only when that would miss.
  const url = port === 3000 && env.HOST === '127.0.0.1' ? '' : ` --url ${api.url}`;
  const token = api.adminTokenGenerated ? `ADMIN_TOKEN=${api.adminToken} ` : '';
  return {
    title: `Tracking API listening on ${api.url}`,
    lines: [
      ['docs', `${api.url}/docs   health ${api.url}/healthz   metrics ${api.url}/metrics`],
      ...serviceLines(env, ['redis', 'kafka', 'clickhouse']),
      ['sandbox', env.SANDBOX_URL ? `${redactUrl(env.SANDBOX_URL)} (trk_test_ keys)` : '(SANDBOX_URL not set: trk_test_ lookups fail; start npm run sandbox)'],
      ...unmovedLine(env),
      ['ADMIN_TOKEN', adminTokenLine(api)],
    ],
    next: [
      'Make a key (the admin CLI; trk_test_ keys poll the sandbox carriers):',
      `  ${token}npm run cli -- keys create --plan trial --mode test --email ops@example.com${url}`,
      'Then look a shipment up with it:',
      `  curl -s -H "X-API-Key: trk_test_…" ${api.url}/v1/track/delhivery/1234567890102`,
    ],
  };
}


/** With Redis, an embedded store left under DATA_DIR answers nothing: said, with how to move it. */
function unmovedLine(env: Env): [string, string][] {
  const notice = env.REDIS_URL ? unmovedStoreNotice(env.DATA_DIR, { pollLog: Boolean(env.KAFKA_BROKERS) }) : null;
  return notice ? [['DATA_DIR', notice]] : [];
}
