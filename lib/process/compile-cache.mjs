/**
 * Preloaded by the start commands (`node --import ./lib/process/compile-cache.mjs …`, see
 * COMPILE_CACHE_FLAGS in start-flags.ts): turns on Node's on-disk compile cache before the app's
 * modules load, so a restart reuses the bytecode and stripped TypeScript of the previous start
 * instead of compiling its hundreds of modules again (module loading was ~40 % of a restart).
 *
 * Plain JavaScript, not TypeScript: this file loads before the cache is on, and a .ts file here
 * made Node load its type stripper (a WebAssembly build of swc) at every start, ~17 MiB of resident
 * memory that a start whose modules all come from the cache never needs.
 *
 * The cache lives in the system's temp directory (Node's default, `node-compile-cache`), is keyed
 * by each file's content and the Node version, so an edited file is compiled afresh, and is skipped
 * silently when it cannot be written; NODE_DISABLE_COMPILE_CACHE=1 turns it off.
 */
import { enableCompileCache } from 'node:module';

enableCompileCache();
