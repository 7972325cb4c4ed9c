import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const TESTS = ['**/*.test.ts'];
/**
 * Test support: helpers, child processes tests kill, and shared suites (*.suite.ts) tests import; never
 * production code. In lib/ and apps/ it is a folder, `testutil/`, and nothing else: a file there is test
 * support whatever its name, and a file anywhere else is production code whatever its name (no
 * `testing-*.ts`, `*.suite.ts` or `fixture.ts` escape; test/lint-boundaries.test.ts also checks the tree).
 */
const TEST_SUPPORT = ['test/**', 'lib/**/testutil/**', 'apps/*/testutil/**', 'bench/**'];
/** What production code may not import: test support and benches. */
const TEST_SUPPORT_IMPORTS = ['**/testutil/**', '**/test/**', '**/bench/**'];
/** Modules production code may not import (repeated by a rule that sets its own restricted imports: a later rule replaces them). */
const PRODUCTION_PATHS = [
  { name: 'node:v8', importNames: ['setFlagsFromString'], message: 'V8 flags go on the node command line (apps/api/context/heap-policy.ts)' },
  { name: 'vitest', message: 'production code does not import the test runner' },
];

/** Folders of pure functions: no I/O, no clients, nothing that starts a process (README "Layout"). */
const PURE = [
  'lib/normalize/**/*.ts', 'lib/insights/**/*.ts', 'lib/redact/**/*.ts', 'lib/lanes/**/*.ts', 'lib/schemas/**/*.ts', 'lib/time/**/*.ts', 'lib/random/**/*.ts',
];
const IO_MODULES = [
  'fs', 'node:fs', 'node:fs/promises', 'node:net', 'node:http', 'node:https', 'node:http2', 'node:tls', 'node:dns', 'node:dgram',
  'node:child_process', 'node:cluster', 'node:worker_threads', 'node:readline', 'node:v8', 'node:process',
  'ioredis', 'kafkajs', '@clickhouse/client', 'undici', 'nodemailer', 'fastify', 'node-cron', 'pino',
].map((name) => ({ name, message: 'pure folders (normalize, insights, redact, lanes, schemas, time, random) do no I/O: take the data as an argument' }));
/** lib folders that talk to the outside world (or start processes). */
const IO_FOLDERS = [
  'access', 'backend', 'batch', 'bus', 'cache', 'carriers', 'clickhouse', 'config', 'kafka', 'kv', 'logging', 'metrics', 'notices', 'pipeline',
  'move', 'poller', 'process', 'product', 'push', 'readiness', 'redis', 'replay', 'sandbox', 'store', 'testutil', 'tracking',
];

/** Written once (lib/time, lib/schemas/key-mode.ts): a second declaration is refused. */
const ONE_NAME = [
  {
    selector: "TSUnionType:has(> TSLiteralType > Literal[value='test']):has(> TSLiteralType > Literal[value='live'])",
    message: "the key mode is KeyMode (lib/schemas/key-mode.ts)",
  },
  {
    selector: 'VariableDeclarator[id.name=/^(SECOND|MINUTE|HOUR|DAY)S?(_MS|_S)?$/]',
    message: 'units of time are declared once, in lib/time (import them, e.g. `HOUR_MS as HOUR`)',
  },
  {
    selector: "VariableDeclarator[id.name=/IST_OFFSET/], Literal[value='+05:30'], Literal[value=19800000]",
    message: "India Standard Time's offset is IST_OFFSET / IST_OFFSET_MS of lib/time",
  },
];

export default tseslint.config(
  { ignores: ['node_modules/**', 'packages/*/dist/**', 'data/**', '.services/**', '.scratch/**', 'coverage/**', 'bench/.*'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': ['error', ...ONE_NAME],
      // The heap policy is a node flag of the start command (apps/api/context/heap-policy.ts).
      '@typescript-eslint/no-restricted-imports': ['error', {
        paths: [{ name: 'node:v8', importNames: ['setFlagsFromString'], message: 'V8 flags go on the node command line (apps/api/context/heap-policy.ts)' }],
      }],
    },
  },
  {
    files: ['lib/time/index.ts', 'lib/schemas/key-mode.ts'],
    rules: { 'no-restricted-syntax': 'off' },
  },
  {
    // Production code never imports test support (no cycles through it; bench/ may).
    files: ['lib/**/*.ts', 'apps/**/*.ts'],
    ignores: [...TESTS, ...TEST_SUPPORT],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', {
        paths: PRODUCTION_PATHS,
        patterns: [{ group: TEST_SUPPORT_IMPORTS, message: 'production code does not import test support or benches' }],
      }],
    },
  },
  {
    // One configuration path: the environment is read by lib/config's env schema (loadEnv) only;
    // carrier variables are named per slug and read by the carrier client.
    files: ['lib/**/*.ts', 'apps/**/*.ts'],
    ignores: [...TESTS, ...TEST_SUPPORT, 'lib/config/load.ts', 'lib/carriers/poll.ts'],
    rules: {
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'read the environment through loadEnv() (lib/config): every variable is in EnvSchema and the README table' }],
    },
  },
  {
    // The delivery model learns from the network's own deliveries; it must never know the sandbox's
    // or the network model's parameters (on any other network its windows must still hold).
    files: ['lib/prediction/**/*.ts'],
    ignores: [...TESTS, 'lib/prediction/testutil/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', {
        paths: PRODUCTION_PATHS,
        patterns: [
          { group: ['**/sandbox/**', '**/sandbox', '**/network/**', '**/network', '**/config/sandbox/**'], message: 'lib/prediction learns from delivered shipments only: no lib/sandbox, lib/network or config/sandbox' },
          { group: TEST_SUPPORT_IMPORTS, message: 'production code does not import test support or benches' },
        ],
      }],
    },
  },
  {
    files: PURE,
    ignores: TESTS,
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', {
        paths: IO_MODULES,
        patterns: [{
          group: IO_FOLDERS.map((folder) => `**/${folder}/**`),
          allowTypeImports: true,
          message: 'pure folders import no I/O module (type imports are fine)',
        }],
      }],
    },
  },
);
