/**
 * Test servers' ports (lib/testutil/ports.ts): drawn below the kernel's ephemeral range, where no
 * outgoing connection takes its local port, and above the services' fixed ports; free when given.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { expect, it } from 'vitest';
import { freePort, TEST_PORTS_FROM } from '../lib/testutil/ports.ts';

const ephemeralLow = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);

it('gives ports between the services\' and the ephemeral range, each one a server can listen on', async () => {
  const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
  for (const port of ports) {
    expect(port).toBeGreaterThanOrEqual(TEST_PORTS_FROM);
    expect(port).toBeLessThan(ephemeralLow);
    const server = createServer();
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', resolve));
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});
