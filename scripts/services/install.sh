#!/usr/bin/env bash
# Installs what the test services need, only what is missing: Debian packages through apt-get and the
# Kafka broker's jars from Maven Central (kafka/pom.xml). Starting and stopping is test/services/*.ts,
# which runs this script before each start; `npm run services -- up` and `npm test` therefore install
# from nothing on a fresh machine (CI: no stdin, no prompts).
#
#   bash scripts/services/install.sh [redis] [clickhouse] [kafka]     (none: all three)
#
# The redis-cluster service uses the redis packages. Safe to re-run; takes milliseconds when nothing
# is missing.
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
STATE_DIR="$REPO_ROOT/.services"
KAFKA_POM="$REPO_ROOT/scripts/services/kafka/pom.xml"
KAFKA_DIR="$STATE_DIR/kafka"
KAFKA_LIBS="$KAFKA_DIR/libs"
export DEBIAN_FRONTEND=noninteractive

die() {
  printf 'install: ERROR: %s\n' "$*" >&2
  exit 1
}

# The last lines of a log on stderr, so a failed install explains itself.
show_log_tail() {
  printf -- '----- last lines of %s -----\n' "$1" >&2
  tail -n 40 "$1" >&2 || true
}

as_root() {
  if [[ "$(id -u)" -eq 0 ]]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo -n "$@"
  else
    die "need root (or passwordless sudo) to run: $*"
  fi
}

# Debian's maintainer scripts try to start the packaged daemons (redis-server, clickhouse-server)
# through invoke-rc.d. There is no init system here and we never want the packaged instances, so a
# temporary policy-rc.d that denies every start is in place during the install (only when the
# machine has none of its own), and removed on exit, also after a failure or an interrupt.
TEMP_POLICY_RC=0
remove_temp_policy_rc() {
  if ((TEMP_POLICY_RC == 1)); then
    as_root rm -f /usr/sbin/policy-rc.d || true
    TEMP_POLICY_RC=0
  fi
}
trap remove_temp_policy_rc EXIT

APT_UPDATED=0
apt_install() {
  local log_file="$STATE_DIR/apt.log" rc=0
  mkdir -p "$STATE_DIR"
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    TEMP_POLICY_RC=1
    as_root sh -c 'printf "#!/bin/sh\n# temporary, from scripts/services/install.sh\nexit 101\n" >/usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d'
  fi
  echo "installing Debian packages: $* (log: $log_file)"
  if ((APT_UPDATED == 0)); then
    as_root apt-get -o DPkg::Lock::Timeout=300 update -q >>"$log_file" 2>&1 || rc=$?
    APT_UPDATED=1
  fi
  if ((rc == 0)); then
    as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -q \
      --no-install-recommends -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
      "$@" >>"$log_file" 2>&1 || rc=$?
  fi
  remove_temp_policy_rc
  if ((rc != 0)); then
    show_log_tail "$log_file"
    die "apt-get install $* failed (exit $rc)"
  fi
}

# Packages whose command is missing, as "package" words for apt_install.
missing_packages() {
  local command package missing=()
  while (($# > 0)); do
    command="$1" package="$2"
    shift 2
    command -v "$command" >/dev/null 2>&1 || missing+=("$package")
  done
  echo "${missing[*]}"
}

install_debian() {
  local missing
  missing="$(missing_packages "$@")"
  # shellcheck disable=SC2086 # a list of package names: split on purpose
  if [[ -n "$missing" ]]; then apt_install $missing; fi
}

# The jars are (re)fetched when missing or when the pom changed since the last fetch; Maven caches
# them in ~/.m2, so a re-fetch after `rm -rf .services` takes seconds.
install_kafka_jars() {
  local want_sha have_sha="" tmp="$KAFKA_DIR/libs.tmp"
  want_sha="$(sha256sum "$KAFKA_POM" | cut -d' ' -f1)"
  [[ -f "$KAFKA_LIBS/.pom.sha256" ]] && have_sha="$(cat "$KAFKA_LIBS/.pom.sha256")"
  if [[ "$want_sha" == "$have_sha" ]] && compgen -G "$KAFKA_LIBS/kafka_2.13-*.jar" >/dev/null; then
    return 0
  fi
  echo "kafka: fetching the broker jars from Maven Central (log: $KAFKA_DIR/mvn.log)"
  mkdir -p "$KAFKA_DIR"
  rm -rf "$tmp"
  if ! mvn -B -q -Dstyle.color=never -f "$KAFKA_POM" dependency:copy-dependencies \
    -DoutputDirectory="$tmp" -DincludeScope=runtime </dev/null >"$KAFKA_DIR/mvn.log" 2>&1; then
    show_log_tail "$KAFKA_DIR/mvn.log"
    die "kafka: Maven could not fetch the broker jars"
  fi
  compgen -G "$tmp/kafka_2.13-*.jar" >/dev/null || die "kafka: Maven ran but no kafka_2.13 jar in $tmp"
  echo "$want_sha" >"$tmp/.pom.sha256"
  # Swapped in one step, so a broker never sees a half-filled libs directory.
  rm -rf "$KAFKA_LIBS"
  mv "$tmp" "$KAFKA_LIBS"
}

[[ $# -gt 0 ]] || set -- redis clickhouse kafka
for service in "$@"; do
  case "$service" in
    redis | redis-cluster) install_debian redis-server redis-server redis-cli redis-tools ;;
    clickhouse) install_debian clickhouse-server clickhouse-server clickhouse-client clickhouse-client ;;
    kafka)
      install_debian java default-jre-headless mvn maven
      install_kafka_jars
      ;;
    *) die "unknown service '$service' (expected: redis, redis-cluster, clickhouse, kafka)" ;;
  esac
done
