#!/usr/bin/env bash
# The one test command (npm test): starts the real services the tests need (installing them on a
# fresh machine), then runs every test and ends with the runner's own "N passed, N failed" line.
set -euo pipefail
cd "$(dirname "$0")/.."

# Headless Chromium for the page tests (docs and trial pages), from Debian's packages.
if ! command -v chromium >/dev/null 2>&1; then
  echo "installing chromium (Debian) for the browser tests..."
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq chromium >/dev/null
fi

if [ -f scripts/services/services.sh ]; then
  bash scripts/services/services.sh up
  # shellcheck disable=SC2046
  export $(bash scripts/services/services.sh env | xargs)
fi

results=.test-results.json
rm -f "$results"
status=0
npx vitest run --reporter=default --reporter=json --outputFile.json="$results" "$@" || status=$?

if [ -f "$results" ]; then
  node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const skipped = r.numPendingTests + r.numTodoTests;
    console.log(`${r.numPassedTests} passed, ${r.numFailedTests} failed` + (skipped ? `, ${skipped} skipped` : ""));
  ' "$results"
else
  echo "0 passed, 1 failed"
  [ "$status" -ne 0 ] || status=1
fi
exit "$status"
