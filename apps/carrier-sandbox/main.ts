/**
 * The sandbox carrier network on its own (`npm run sandbox`): PORT (default 4010), HOST (default
 * 127.0.0.1), SANDBOX_FAULTS (JSON object slug → {latencyMs?, errorRate?, outage?}), LOG_LEVEL.
 */
import { pino } from 'pino';
import { parseFaultsEnv, startSandbox } from '../../lib/sandbox/server.ts';

const log = pino({ level: process.env.LOG_LEVEL ?? 'info' });

const port = Number(process.env.PORT ?? 4010);
if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new Error(`PORT must be a port number, got "${process.env.PORT}"`);
const host = process.env.HOST ?? '127.0.0.1';
const sandbox = await startSandbox({ port, host, faults: parseFaultsEnv(process.env.SANDBOX_FAULTS) });
log.info({ url: sandbox.url }, `carrier sandbox listening on ${sandbox.url}`);

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
