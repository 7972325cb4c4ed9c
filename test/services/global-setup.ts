/**
 * vitest's globalSetup (vitest.config.ts). Hands every test the services' addresses (provide();
 * tests read them with inject(), through urls.ts) and, when the run includes a file that needs
 * services (*.services.test.ts, *.outage.test.ts: test/test-names.test.ts keeps every other test
 * file off them), starts those not running yet, so `npm run test:unit` starts nothing.
 *
 * What it started it stops at the end; what was running before (a developer's `npm run services --
 * up`) stays. Two exceptions: KEEP_SERVICES=1 leaves everything running, and under scripts/test.sh
 * (TEST_SERVICES_STARTED_FILE set) the names are written to that file instead, because test.sh runs
 * vitest three times and stops what they started after the last.
 */
import { appendFileSync } from 'node:fs';
import type { TestProject } from 'vitest/node';
import { SERVICES, SERVICE_NAMES, serviceEnv, startServices, stopServices, type ServiceName } from './index.ts';

const NEEDS_SERVICES = /\.(services|outage)\.test\.ts$/;

function urls(): Record<ServiceName, string> {
  return Object.fromEntries(SERVICE_NAMES.map((name) => [name, SERVICES[name].url()])) as Record<ServiceName, string>;
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const recordTo = process.env.TEST_SERVICES_STARTED_FILE;
  const started: ServiceName[] = [];
  const stopStarted = async () => {
    if (started.length === 0 || recordTo) return;
    if (process.env.KEEP_SERVICES === '1') {
      console.log(`KEEP_SERVICES=1: ${started.join(', ')} left running (npm run services -- down stops them)`);
      return;
    }
    await stopServices(started);
  };
  // getPaths(): the test files of this run, known before vitest runs its globalSetup.
  if (project.vitest.state.getPaths().some((file) => NEEDS_SERVICES.test(file))) {
    try {
      await startServices(SERVICE_NAMES, console.log, (name) => {
        started.push(name);
        if (recordTo) appendFileSync(recordTo, `${name}\n`);
      });
    } catch (err) {
      await stopStarted();
      throw err;
    }
    // Child processes of tests read the addresses from the environment, as `npm run services -- env`
    // exports them (the operators' documented commands, apps started as their npm scripts do).
    Object.assign(process.env, serviceEnv());
  }
  project.provide('serviceUrls', urls());
  return stopStarted;
}
