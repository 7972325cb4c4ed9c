/**
 * npm run bench -- startup: what `npm start` costs before it answers and while it idles. The
 * command `npm start` runs (node strips the types itself) is started as a process of its own:
 * the time from spawn to the first 200 of /readyz, on a fresh DATA_DIR (the first start seeds a
 * sandbox history) and again on the same DATA_DIR (a restart), and the process's RSS after it has
 * idled for IDLE_SECONDS. When tsx is installed (`npm i --no-save tsx`; the project no longer
 * depends on it) the same runs go through its loader too, alternating with the native ones, so
 * the two are compared in one run on the same Node.
 *
 * Then a restart over a long history: a raw-poll log of BENCH_STARTUP_LARGE_POLLS polls (default
 * 1,000,000; 0 skips it) written by lib/sandbox's history writer into a temp DATA_DIR, one start
 * that replays it and writes the checkpoint (lib/pipeline/embedded.ts), then the restart measured
 * (its tail empty), and one more restart watched past the model's first rebuild. Each figure is
 * printed with the load average of the moment (a shared machine).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, open, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { withoutProjectEnv } from '../lib/config/index.ts';
import { freePort } from '../lib/testutil/ports.ts';
import { COMPILE_CACHE_FLAGS } from '../lib/process/start-flags.ts';
import { HEAP_POLICY_FLAGS, withMallocPolicy } from '../apps/api/context/heap-policy.ts';
import { loadCalendar } from '../lib/calendar/index.ts';
import { loadNetworkConfig } from '../lib/network/config.ts';
import { loadPlaces } from '../lib/places/index.ts';
import { historyPolls } from '../lib/sandbox/history.ts';
import { pollLogPath } from '../lib/store/poll-log.ts';
import type { BenchResult } from './report.ts';

const REPO_ROOT = fileURLToPath(new URL('../', import.meta.url));
const IDLE_SECONDS = Number(process.env.BENCH_STARTUP_IDLE_SECONDS ?? 10);
const RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? 2);
const LARGE_POLLS = Number(process.env.BENCH_STARTUP_LARGE_POLLS ?? 1_000_000);
/** The rebuild interval of the start watched past its first rebuild (0 skips it); above 80 s, so one rebuild is watched. */
const AFTER_REBUILD_SECONDS = Number(process.env.BENCH_STARTUP_REBUILD_SECONDS ?? 120);
/** A start that replays a long log (no checkpoint yet) takes minutes on a loaded machine. */
const REPLAY_BOUND_MS = 30 * 60_000;
/** The targets (issue 41 "Numbers"). */
const RESTART_TARGET_MS = 1500;
const RESTART_RSS_TARGET_MIB = 160;
const LARGE_RESTART_TARGET_MS = 2000;
const LARGE_RESTART_RSS_TARGET_MIB = 200;

const load = () => `load ${loadavg()[0]!.toFixed(2)}`;

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

/** What a start waits for after /readyz, and what it reads then. */
interface Watch {
  /** PREDICTION_REBUILD_SECONDS for the start (absent: the default). */
  rebuildSeconds?: number;
  /** How long to idle after /readyz before the last RSS reading (default IDLE_SECONDS). */
  idleSeconds?: number;
}

/**
 * One start of the embedded default on dataDir: ms to /readyz, the RSS after idling, its highest
 * reading while idling (read every 2 s) and the load average then.
 */
async function startOnce(leg: Leg, dataDir: string, boundMs = 120_000, watch: Watch = {}): Promise<StartFigures> {
  const port = await freePort();
  const started = performance.now();
  const rebuild = watch.rebuildSeconds ? { PREDICTION_REBUILD_SECONDS: String(watch.rebuildSeconds) } : {};
  const child = spawn(process.execPath, [...HEAP_POLICY_FLAGS, ...COMPILE_CACHE_FLAGS, ...leg.loaderArgs, 'apps/embedded/main.ts'], {
    cwd: REPO_ROOT,
    env: withMallocPolicy({ ...withoutProjectEnv(process.env), DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn', ...rebuild }),
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    await ready(`http://127.0.0.1:${port}/readyz`, Date.now() + boundMs);
    const readyMs = Math.round(performance.now() - started);
    const until = performance.now() + (watch.idleSeconds ?? IDLE_SECONDS) * 1000;
    let peakRssMiB = 0;
    for (let wait = until - performance.now(); wait > 0; wait = until - performance.now()) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(2000, wait)));
      peakRssMiB = Math.max(peakRssMiB, await rssMiB(child.pid!));
    }
    return { readyMs, idleRssMiB: await rssMiB(child.pid!), peakRssMiB, load: load() };
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

interface StartFigures { readyMs: number; idleRssMiB: number; peakRssMiB: number; load: string }

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
          { name: `${leg.name} run ${run}: first start → /readyz (${first.load})`, value: first.readyMs, unit: 'ms', target: null, pass: null },
          { name: `${leg.name} run ${run}: RSS idle ${IDLE_SECONDS} s after the first start`, value: first.idleRssMiB, unit: 'MiB', target: null, pass: null },
          {
            name: `${leg.name} run ${run}: restart → /readyz (${again.load})`, value: again.readyMs, unit: 'ms',
            target: `<= ${RESTART_TARGET_MS}`, pass: again.readyMs <= RESTART_TARGET_MS,
          },
          {
            name: `${leg.name} run ${run}: RSS idle ${IDLE_SECONDS} s after restart`, value: again.idleRssMiB, unit: 'MiB',
            target: `<= ${RESTART_RSS_TARGET_MIB}`, pass: again.idleRssMiB <= RESTART_RSS_TARGET_MIB,
          },
        );
      } finally {
        await rm(dataDir, { recursive: true, force: true });
      }
    }
  }
  if (LARGE_POLLS > 0) results.push(...await benchLargeRestart(legs[0]!, LARGE_POLLS));
  return results;
}

/**
 * Writes at least `polls` polls of a generated network history (every poll of each journey, test
 * mode) as DATA_DIR's raw-poll log, in the log's own line format; returns how many were written.
 */
async function writeHistoryLog(dataDir: string, polls: number): Promise<number> {
  const file = await open(pollLogPath(dataDir), 'w');
  let written = 0;
  let chunk: string[] = [];
  try {
    // ~3.5 polls a journey: enough journeys over 90 days for `polls`, cut once there.
    for await (const { polls: made } of historyPolls({
      config: loadNetworkConfig(), calendar: loadCalendar(), places: loadPlaces(), shipments: Math.ceil(polls / 3), days: 90, seed: 41, endMs: Date.now(),
    })) {
      for (const poll of made) chunk.push(`${JSON.stringify({ mode: 'test', poll })}\n`);
      written += made.length;
      if (chunk.length >= 2000) { await file.write(chunk.join('')); chunk = []; }
      if (written >= polls) break;
    }
    await file.write(chunk.join(''));
  } finally {
    await file.close();
  }
  return written;
}

/**
 * The restart's memory past the model's first rebuild: a start whose model is rebuilt
 * AFTER_REBUILD_SECONDS after it began (the timer starts with the process), read until 80 s after
 * that (the rebuild, then the idle release of lib/process/release-memory.ts, which waits for 30 s
 * without work), before the next rebuild. What a restart's RSS looks like ten minutes on.
 */
async function afterRebuild(leg: Leg, dataDir: string, label: string): Promise<BenchResult[]> {
  const watched = await startOnce(leg, dataDir, 120_000, { rebuildSeconds: AFTER_REBUILD_SECONDS, idleSeconds: AFTER_REBUILD_SECONDS + 80 });
  const name = `${label}: a restart past its first rebuild (PREDICTION_REBUILD_SECONDS=${AFTER_REBUILD_SECONDS})`;
  return [
    { name: `${name}: highest RSS (the rebuild)`, value: watched.peakRssMiB, unit: 'MiB', target: null, pass: null },
    { name: `${name}: RSS 80 s after the rebuild (${watched.load})`, value: watched.idleRssMiB, unit: 'MiB', target: null, pass: null },
  ];
}

/** A restart over a long log: one start replays it and writes the checkpoint; the next is measured. */
async function benchLargeRestart(leg: Leg, polls: number): Promise<BenchResult[]> {
  const dataDir = await mkdtemp(join(tmpdir(), 'bench-startup-large-'));
  try {
    const started = performance.now();
    const written = await writeHistoryLog(dataDir, polls);
    console.log(`(${written.toLocaleString('en-US')} polls written in ${Math.round((performance.now() - started) / 1000)} s; the first start replays them)`);
    const first = await startOnce(leg, dataDir, REPLAY_BOUND_MS);
    const again = await startOnce(leg, dataDir);
    const label = `${leg.name}, ${written.toLocaleString('en-US')}-poll log`;
    const rebuilt = AFTER_REBUILD_SECONDS > 0 ? await afterRebuild(leg, dataDir, label) : [];
    return [
      { name: `${label}: start replaying it → /readyz (${first.load})`, value: first.readyMs, unit: 'ms', target: null, pass: null },
      { name: `${label}: RSS idle ${IDLE_SECONDS} s after that start`, value: first.idleRssMiB, unit: 'MiB', target: null, pass: null },
      {
        name: `${label}: restart (checkpoint) → /readyz (${again.load})`, value: again.readyMs, unit: 'ms',
        target: `<= ${LARGE_RESTART_TARGET_MS}`, pass: again.readyMs <= LARGE_RESTART_TARGET_MS,
      },
      {
        name: `${label}: RSS idle ${IDLE_SECONDS} s after restart`, value: again.idleRssMiB, unit: 'MiB',
        target: `<= ${LARGE_RESTART_RSS_TARGET_MIB}`, pass: again.idleRssMiB <= LARGE_RESTART_RSS_TARGET_MIB,
      },
      ...rebuilt,
    ];
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}
