/**
 * npm run bench -- startup: what `npm start` costs before it answers and while it idles. The
 * command `npm start` runs (node strips the types itself) is started as a process of its own:
 * the time from spawn to the first 200 of /readyz, on a fresh DATA_DIR (the first start seeds a
 * sandbox history) and again on the same DATA_DIR (a restart), and the process's RSS after it has
 * idled for IDLE_SECONDS. When tsx is installed (`npm i --no-save tsx`; the project no longer
 * depends on it) the same runs go through its loader too, alternating with the native ones, so
 * the two are compared in one run on the same Node.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { withoutProjectEnv } from '../lib/config/index.ts';
import { freePort } from '../lib/testutil/ports.ts';
import { HEAP_POLICY_FLAGS } from '../apps/api/context/heap-policy.ts';
import type { BenchResult } from './report.ts';

const REPO_ROOT = fileURLToPath(new URL('../', import.meta.url));
const IDLE_SECONDS = Number(process.env.BENCH_STARTUP_IDLE_SECONDS ?? 10);
const RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? 2);

interface Leg { name: string; loaderArgs: string[] }

function tsxLoader(): string | null {
  try {
    return createRequire(join(REPO_ROOT, 'package.json')).resolve('tsx');
  } catch {
    return null;
  }
}

async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1]);
  return Math.round((kib / 1024) * 10) / 10;
}

async function ready(url: string, deadline: number): Promise<void> {
  while (Date.now() < deadline) {
    const ok = await fetch(url).then((r) => r.status === 200, () => false);
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`${url} not ready in time`);
}

/** One start of the embedded default on dataDir: ms to /readyz, and RSS after idling. */
async function startOnce(leg: Leg, dataDir: string): Promise<{ readyMs: number; idleRssMiB: number }> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [...HEAP_POLICY_FLAGS, ...leg.loaderArgs, 'apps/embedded/main.ts'], {
    cwd: REPO_ROOT, env: { ...withoutProjectEnv(process.env), DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn' }, stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    await ready(`http://127.0.0.1:${port}/readyz`, Date.now() + 120_000);
    const readyMs = Math.round(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
    return { readyMs, idleRssMiB: await rssMiB(child.pid!) };
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

export async function benchStartup(): Promise<BenchResult[]> {
  const loader = tsxLoader();
  const legs: Leg[] = [{ name: 'node (native)', loaderArgs: [] }];
  if (loader) legs.push({ name: 'node --import tsx', loaderArgs: ['--import', loader] });
  else console.log('(tsx not installed: only the native leg; `npm i --no-save tsx` adds the tsx leg beside it)');
  const results: BenchResult[] = [];
  for (let run = 1; run <= RUNS; run++) {
    for (const leg of legs) {
      const dataDir = await mkdtemp(join(tmpdir(), 'bench-startup-'));
      try {
        const first = await startOnce(leg, dataDir);
        const again = await startOnce(leg, dataDir);
        results.push(
          { name: `${leg.name} run ${run}: first start → /readyz`, value: first.readyMs, unit: 'ms', target: null, pass: null },
          { name: `${leg.name} run ${run}: RSS idle ${IDLE_SECONDS} s after the first start`, value: first.idleRssMiB, unit: 'MiB', target: null, pass: null },
          { name: `${leg.name} run ${run}: restart → /readyz`, value: again.readyMs, unit: 'ms', target: null, pass: null },
          { name: `${leg.name} run ${run}: RSS idle ${IDLE_SECONDS} s after restart`, value: again.idleRssMiB, unit: 'MiB', target: null, pass: null },
        );
      } finally {
        await rm(dataDir, { recursive: true, force: true });
      }
    }
  }
  return results;
}
