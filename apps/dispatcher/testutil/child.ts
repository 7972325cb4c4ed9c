/**
 * A dispatcher app in a child process for kill tests (tests only): options as JSON in argv[2], the
 * environment as usual. Prints "ready" once it consumes: with `fromLatest`, once its group has
 * joined (before that, "latest" is not fixed yet and events published meanwhile could be skipped).
 */
import { loadEnv } from '../../../lib/config/index.ts';
import { startDispatcher } from '../start.ts';

const options = JSON.parse(process.argv[2] ?? '{}') as Parameters<typeof startDispatcher>[1];
const app = await startDispatcher(loadEnv(), { ...options, healthPort: null });
while (options?.fromLatest && (await app.health.inject({ method: 'GET', url: '/readyz' })).statusCode !== 200) {
  await new Promise((resolve) => setTimeout(resolve, 100));
}
process.stdout.write('ready\n');
