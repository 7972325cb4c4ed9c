/**
 * The services by hand: `npm run services -- up|down|status|env` (node test/services/cli.ts …).
 * Tests need none of it (vitest's globalSetup starts what a run needs); it is for running the apps
 * against the services, a bench, or keeping the services up between test runs.
 */
import { SERVICES, SERVICE_NAMES, serviceEnv, startServices, stopServices, type ServiceName } from './index.ts';

const USAGE = `usage: npm run services -- <command> [service...]   (services: ${SERVICE_NAMES.join(', ')}; default all)
  up       install what is missing, start every service that is not running
  down     stop our service instances (installed packages and data stay)
  status   one line per service: running/stopped, its address and pid(s) (exit 3 if any is stopped)
  env      only REDIS_URL=, KAFKA_BROKERS=, CLICKHOUSE_URL=, REDIS_CLUSTER_URL= lines (npm run -s services -- env)`;

function names(args: string[]): ServiceName[] {
  for (const arg of args) {
    if (!SERVICE_NAMES.includes(arg as ServiceName)) throw new Error(`unknown service '${arg}' (expected one of: ${SERVICE_NAMES.join(', ')})\n${USAGE}`);
  }
  return args.length > 0 ? (args as ServiceName[]) : [...SERVICE_NAMES];
}

async function main(command: string | undefined, args: string[]): Promise<number> {
  switch (command) {
    case 'up': {
      const began = performance.now();
      await startServices(names(args));
      console.log(`services up (${((performance.now() - began) / 1000).toFixed(1)} s). Addresses: npm run -s services -- env`);
      return 0;
    }
    case 'down':
      await stopServices(names(args));
      return 0;
    case 'status': {
      let code = 0;
      for (const name of names(args)) {
        const service = SERVICES[name];
        const pids = service.pids();
        if (pids.length === 0) code = 3; // the LSB "not running" code: `status || up` works
        const state = pids.length > 0 ? `running  ${service.url()} (pid ${pids.join(' ')})` : `stopped  ${service.url()}`;
        console.log(`${name.padEnd(13)} ${state}`);
      }
      return code;
    }
    case 'env':
      // Only the variables on stdout, so `eval "$(… env | sed 's/^/export /')"` works; also while the services are down.
      for (const [name, value] of Object.entries(serviceEnv())) console.log(`${name}=${value}`);
      return 0;
    case 'help':
    case '--help':
    case '-h':
      console.log(USAGE);
      return 0;
    default:
      console.error(USAGE);
      return 2;
  }
}

try {
  process.exitCode = await main(process.argv[2], process.argv.slice(3));
} catch (err) {
  console.error(`services: ERROR: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
}
