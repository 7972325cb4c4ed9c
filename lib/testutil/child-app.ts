/** Test support: an app in a child process (node runs the TypeScript itself), for SIGKILL and SIGTERM tests. */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';


export interface ChildApp {
  child: ChildProcess;
  /** What followed "ready" on the child's first ready line (e.g. its health port). */
  readyWith: string;
  /** Everything the child wrote to stderr so far. */
  stderr(): string;
  /** Resolves with the exit code (null when killed by a signal) and the signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts `script` (relative to the repository root) with `options` as JSON in argv[2] and waits
 * for its "ready" line. The environment is this process's plus `env`.
 */
export async function startChildApp(script: string, options: object, env: Record<string, string>): Promise<ChildApp> {
  // node itself (it strips the types), as the apps' scripts run them: no launcher between the test
  // and the app, so a signal reaches the app (the tsx CLI SIGKILLed a child slow to confirm SIGTERM).
  const child = spawn(process.execPath, [join(import.meta.dirname, '../..', script), JSON.stringify(options)], {
    env: { ...process.env, LOG_LEVEL: 'silent', ...env }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  const readyWith = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /^ready ?(.*)$/m.exec(out);
      if (match) resolve(match[1]!.trim());
    });
    void exited.then(({ code, signal }) => reject(new Error(`${script} exited (${code ?? signal}) before ready: ${stderr}`)));
  });
  // Nothing more is read from stdout: it must not keep the test process alive.
  child.stdout!.destroy();
  return { child, readyWith, stderr: () => stderr, exited };
}
