/**
 * A dispatcher app in a child process for kill tests (tests only): options as JSON in argv[2], the
 * environment as usual. Prints "ready" once it consumes.
 */
import { loadEnv } from '../../lib/config/index.ts';
import { startDispatcher } from './start.ts';

const options = JSON.parse(process.argv[2] ?? '{}') as Parameters<typeof startDispatcher>[1];
await startDispatcher(loadEnv(), { ...options, healthPort: null });
process.stdout.write('ready\n');
