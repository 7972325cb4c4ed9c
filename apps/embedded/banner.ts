import type { Env } from '../../lib/config/index.ts';
import { serviceLines } from '../../lib/process/banner.ts';

export interface BannerFacts {
  base: string;
  mode: { distributed: boolean; banner: string };
  gatewayUrl: string;
  sandboxUrl: string;
  /** The sandbox messaging providers' page: the customer notices they received. */
  messagingUrl: string;
  /** The trial key whole (first start only), and its prefix. */
  key: string | null;
  trialPrefix: string;
  /** The admin token line (apps/api/context/banner.ts). */
  adminTokenLine: string;
  adminTokenFile: string | null;
  /** A store left under DATA_DIR while keys live in Redis, or null. */
  unmoved: string | null;
}

/** What `npm start` prints once it listens: where things are, the keys, and a curl line to try. */
export function startBanner(env: Env, facts: BannerFacts): string {
  const { base, key } = facts;
  const cliUrl = base === 'http://127.0.0.1:3000' ? '' : ` --url ${base}`;
  const lines = [
    '',
    `Tracking API listening on ${base}`,
    `  mode:        ${facts.mode.banner}`,
    `  docs:        ${base}/docs      trial page: ${base}/trial`,
    `  renew/pay:   ${base}/billing/renew?key=${facts.trialPrefix}&plan=starter   (sandbox payment gateway: ${facts.gatewayUrl})`,
    `  data dir:    ${env.DATA_DIR}   sandbox carriers: ${facts.sandboxUrl}`,
    `  metrics:     ${base}/metrics   health: ${base}/healthz`,
    `  notices:     ${facts.messagingUrl}/   (customer notices the sandbox WhatsApp, SMS and e-mail providers received)`,
    ...(facts.mode.distributed
      ? [`  services:    ${serviceLines(env, ['kafka', 'clickhouse', 'redis']).map(([name, value]) => `${name} ${value}`).join('   ')}`]
      : []),
    // Keys live in Redis now: an embedded store left under DATA_DIR answers nothing.
    ...(env.REDIS_URL && facts.unmoved ? [`  DATA_DIR:    ${facts.unmoved}`] : []),
    `  ADMIN_TOKEN: ${facts.adminTokenLine}`,
    key
      ? `  trial key:   ${key}   (trk_test_: sandbox carriers, 100 lookups, 14 days; shown at this first start only)`
      : `  trial key:   ${facts.trialPrefix}…   (made at the first start and shown then; a new one: the trial page or the keys create line below)`,
    env.WEBHOOK_ALLOWED_TARGETS
      ? `  webhooks:    private targets opened by WEBHOOK_ALLOWED_TARGETS=${env.WEBHOOK_ALLOWED_TARGETS} (every key may send there)`
      : '  webhooks:    public targets only; to receive on this machine start with WEBHOOK_ALLOWED_TARGETS=127.0.0.1/32',
    '',
    key ? 'Try it:' : `Try it (with the trial key ${facts.trialPrefix}… or another):`,
    `  curl -s -H "X-API-Key: ${key ?? 'trk_test_…'}" ${base}/v1/track/delhivery/1234567890102`,
    `More keys (the admin CLI${facts.adminTokenFile ? `, which reads the token from ${facts.adminTokenFile}` : ', with ADMIN_TOKEN set'}):`,
    `  npm run cli -- keys create --plan trial --mode test --email ops@example.com${cliUrl}`,
    '',
  ];
  return lines.join('\n') + '\n';
}
