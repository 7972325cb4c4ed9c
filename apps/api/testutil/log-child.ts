/**
 * Child of log-stream.test.ts: writes COUNT lines through the API's stdout log stream, then exits at
 * once with process.exit, as the apps do after shutting down (flushing first unless told not to).
 */
import { flushLogs, stdoutLogStream } from '../../../lib/logging/log-stream.ts';

const [count, mode] = process.argv.slice(2);
const stream = stdoutLogStream();
for (let i = 0; i < Number(count); i++) stream.write(`{"line":${i}}\n`);
if (mode !== 'no-flush') await flushLogs();
process.exit(0);
