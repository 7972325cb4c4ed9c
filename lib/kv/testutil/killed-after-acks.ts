/**
 * Test support for "durable when acknowledged": runs a child process (a TypeScript file beside the
 * test) that writes through a real embedded store and prints `acked <id>` each time the store's
 * promise resolved, and kills it with SIGKILL as soon as it has printed `count` of them, without
 * letting it close anything. Returns the ids it acknowledged, for the test to find in a store
 * opened again on the same directory.
 */
import { spawn } from 'node:child_process';

export async function killAfterAcks(child: string, args: readonly string[], count: number): Promise<string[]> {
  const proc = spawn(process.execPath, [child, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  proc.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
  const exited = new Promise<NodeJS.Signals | null>((resolve) => proc.once('exit', (_code, signal) => resolve(signal)));
  const acked: string[] = [];
  await new Promise<void>((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const lines = out.split('\n');
      out = lines.pop()!;
      for (const line of lines) if (line.startsWith('acked ')) acked.push(line.slice('acked '.length));
      // At once: the child is writing its next ones (some fsyncs in flight) when the signal lands.
      if (acked.length >= count) { proc.kill('SIGKILL'); resolve(); }
    });
    void exited.then(() => reject(new Error(`the child exited after ${acked.length} of ${count} acknowledgements: ${stderr}`)));
  });
  const signal = await exited;
  if (signal !== 'SIGKILL') throw new Error(`the child ended with ${signal ?? 'an exit'}, not SIGKILL: ${stderr}`);
  return acked;
}
