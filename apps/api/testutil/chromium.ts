import { existsSync } from 'node:fs';

/** Debian's Chromium, installed by scripts/test.sh (`apt-get install -y chromium`); the browser tests drive it with playwright-core. */
export const CHROMIUM = '/usr/bin/chromium';

/** The flags this machine needs (no GPU, no sandbox as root, no background calls to the closed network). */
export const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

/** Throws, saying how to install it, when Chromium is missing: the browser tests then fail rather than skip. */
export function requireChromium(): void {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium is not installed at ${CHROMIUM}: run \`apt-get install -y chromium\` (scripts/test.sh does) and test again.`);
  }
}
