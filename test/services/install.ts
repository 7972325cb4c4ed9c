/**
 * Installs what a service needs before it starts (scripts/services/install.sh: Debian packages, the
 * Kafka jars); a no-op taking milliseconds when everything is there.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { ServiceName } from './ports.ts';
import { REPO_ROOT } from './state.ts';

const SCRIPT = join(REPO_ROOT, 'scripts/services/install.sh');

/** Runs install.sh for `names`; its progress lines go to `log`, its errors into the thrown Error. */
export async function ensureInstalled(names: readonly ServiceName[], log: (line: string) => void): Promise<void> {
  if (names.length === 0) return; // (install.sh without names installs everything)
  const child = spawn('bash', [SCRIPT, ...names], { stdio: ['ignore', 'pipe', 'pipe'] });
  let errors = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => text.trimEnd().split('\n').forEach((line) => log(line)));
  child.stderr.setEncoding('utf8').on('data', (text: string) => { errors += text; });
  const code = await new Promise<number | null>((resolve, reject) => child.once('error', reject).once('close', resolve));
  if (code !== 0) throw new Error(`services: installing ${names.join(', ')} failed (bash ${SCRIPT} exited ${code})\n${errors.trimEnd()}`);
}
