/**
 * A stand-in app under the shared process runner (tests of lib/process/run.ts only). argv[2] is
 * JSON: `stop` says how its stop behaves ('ok', 'fails', 'hangs' with a live handle, 'hangs-idle'
 * on a promise nothing will settle and nothing keeps the process alive for), `deadlineMs` the
 * runner's deadline, `startFails` a start that throws. Prints "ready" once started, and "finally"
 * when the runner's last step runs.
 */
import { StopSteps, runApp } from '../run.ts';

const { stop, deadlineMs, startFails } = JSON.parse(process.argv[2] ?? '{}') as {
  stop: 'ok' | 'fails' | 'hangs' | 'hangs-idle'; deadlineMs: number; startFails?: boolean;
};

runApp('stand-in', async () => {
  if (startFails) throw new Error('the stand-in could not start');
  // The app's work: a handle that keeps the process alive until the stop ends it.
  const work = setInterval(() => {}, 1_000);
  process.stdout.write('ready\n');
  const steps = new StopSteps();
  return {
    stopStep: () => steps.underWay(),
    async stop() {
      await steps.step('the health server', () => {});
      if (stop === 'ok') { clearInterval(work); return; }
      if (stop === 'fails') { clearInterval(work); throw new Error('the writer could not flush'); }
      // A stop that never ends: still holding its handle, or awaiting something nothing will settle.
      if (stop === 'hangs-idle') clearInterval(work);
      await steps.step('the writer (last flush)', () => new Promise<void>(() => {}));
    },
  };
}, { deadlineMs, finally: async () => { process.stdout.write('finally\n'); } });
