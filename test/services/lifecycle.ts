/** The steps every service's start shares, written once: the start around them is the service's own. */
import { ensureInstalled } from './install.ts';
import type { ServiceName } from './ports.ts';
import { withLock } from './state.ts';

interface RunningService {
  running(): boolean;
  url(): string;
  pids(): number[];
}

/**
 * One start at a time (a lock under .services/), a running instance of ours reused rather than
 * started twice, what is missing installed, then `launch`. Answers whether this call started it,
 * so the caller (npm test) stops only what it started.
 */
export function startOnce(name: ServiceName, service: RunningService, log: (line: string) => void, launch: () => Promise<void>): Promise<boolean> {
  return withLock(async () => {
    if (service.running()) {
      const pids = service.pids();
      log(`${name}: already running at ${service.url()} (pid${pids.length > 1 ? 's' : ''} ${pids.join(' ')})`);
      return false;
    }
    await ensureInstalled([name], log);
    await launch();
    return true;
  });
}
