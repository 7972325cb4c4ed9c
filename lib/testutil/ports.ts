import { randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * Where test servers' ports are drawn from: above every port the project's services take (their
 * third set ends at 29093, test/services/ports.ts) and below the kernel's ephemeral range. A port
 * the kernel hands out for port 0 comes from that range, which is also where outgoing connections
 * (the Kafka, Redis and ClickHouse clients of every test running beside) take their own local
 * ports: one took a port between its check and the server's listen, and a one-process start failed
 * in CI with EADDRINUSE.
 */
export const TEST_PORTS_FROM = 30_000;

/** The first port of the kernel's ephemeral range (Linux; 32768 where it cannot be read). */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 0 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

/** `port` if a server can listen on it on loopback now (closed again at once), else null; 0 asks the kernel for one. */
async function listenable(port: number): Promise<number | null> {
  const server = createServer();
  const listening = await new Promise<boolean>((resolve) => server.once('error', () => resolve(false)).listen(port, '127.0.0.1', () => resolve(true)));
  if (!listening) return null;
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return address === null || typeof address === 'string' ? null : address.port;
}

/**
 * A loopback port free a moment ago (bound, then released): for a server a test is about to start,
 * or a port nothing listens on. Drawn at random below the ephemeral range (TEST_PORTS_FROM says
 * why); where that range starts too low to leave room, one the kernel picks.
 */
export async function freePort(): Promise<number> {
  const below = ephemeralLow();
  if (below - TEST_PORTS_FROM >= 256) {
    for (let attempt = 0; attempt < 64; attempt++) {
      const port = await listenable(randomInt(TEST_PORTS_FROM, below));
      if (port !== null) return port;
    }
  }
  const port = await listenable(0);
  if (port === null) throw new Error('no free loopback port');
  return port;
}
