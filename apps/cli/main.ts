/**
 * npm run cli -- <command>: the operators' command line, a client of the admin HTTP API
 * (contracts.md "Admin API"). It never opens the key store itself, so it works the same against
 * the embedded default and the distributed mode. `npm run cli -- --help` lists the commands.
 */
import { loadEnv } from '../../lib/config/index.ts';
import { runCli } from './commands/cli.ts';

const code = await runCli(process.argv.slice(2), {
  env: loadEnv(),
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
});
process.exitCode = code;
