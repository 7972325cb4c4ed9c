/**
 * The sandbox carrier network on its own (`npm run sandbox`): PORT (default 4010), HOST (default
 * 127.0.0.1), SANDBOX_FAULTS (JSON object slug → {latencyMs?, errorRate?, outage?}), LOG_LEVEL.
 */
import { pino } from 'pino';
import { loadSandboxEnv } from '../../lib/config/index.ts';
import { printBanner } from '../../lib/process/banner.ts';
import { parseFaultsEnv, startSandbox } from '../../lib/sandbox/server.ts';

const env = loadSandboxEnv();
const log = pino({ level: env.LOG_LEVEL });
const sandbox = await startSandbox({ port: env.PORT, host: env.HOST, faults: parseFaultsEnv(env.SANDBOX_FAULTS) });
log.info({ url: sandbox.url }, `carrier sandbox listening on ${sandbox.url}`);
printBanner({
  title: 'Carrier sandbox: simulated courier endpoints for trk_test_ keys',
  lines: [
    ['listening', sandbox.url],
    ['faults', env.SANDBOX_FAULTS ? env.SANDBOX_FAULTS : 'none (SANDBOX_FAULTS)'],
    ['health', `${sandbox.url}/healthz   faults now: ${sandbox.url}/_faults`],
    ['metrics', 'none (a test double)'],
  ],
  next: [`Point the API and poller at it: SANDBOX_URL=${sandbox.url} npm run api`],
});

let closing = false;
async function shutdown(signal: NodeJS.Signals): Promise<void> {
  if (closing) return;
  closing = true;
  log.info({ signal }, 'carrier sandbox closing');
  await sandbox.close();
  process.exit(0);
}
process.once('SIGTERM', (signal) => void shutdown(signal));
process.once('SIGINT', (signal) => void shutdown(signal));
