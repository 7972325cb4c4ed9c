/**
 * Preloaded by the start commands (`node --import ./lib/process/compile-cache.ts …`, see
 * COMPILE_CACHE_FLAGS): turns on Node's on-disk compile cache before the app's modules load, so a
 * restart reuses the bytecode (and stripped TypeScript) of the previous start instead of compiling
 * its hundreds of modules again: `npm start`'s restart to ready went from ~2.8 s to ~2.2 s on this
 * machine, module loading being ~40 % of it. The cache lives in the system's temp directory
 * (Node's default, `node-compile-cache`), is keyed by each file's content and the Node version, so
 * an edited file is compiled afresh, and is skipped silently when it cannot be written;
 * NODE_DISABLE_COMPILE_CACHE=1 turns it off.
 */
import { enableCompileCache } from 'node:module';

enableCompileCache();
