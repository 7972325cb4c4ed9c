#!/usr/bin/env bash
# Installs, starts, stops and reports the real backing services (Redis, ClickHouse, Kafka) natively on
# this Debian 12 machine. There is no Docker engine here, and only Debian apt, Maven Central and npm
# are reachable, so: Redis and ClickHouse come from Debian packages, Kafka from Maven Central.
#
#   bash scripts/services/services.sh up|down|status|env|start-one NAME|stop-one NAME
#   (npm run services -- up ...; use `npm run -s services -- env` so npm prints no banner)
#
# Every instance is OUR OWN process, bound to 127.0.0.1 only, with all state (configs, data, logs,
# pidfiles, the Kafka jars) under <repo>/.services/. The machine's own Redis on 6379 is never touched.
# Safe to re-run: `up` only installs what is missing and only starts what is not running.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/../.." && pwd)"
STATE_DIR="$REPO_ROOT/.services"
PORTS_FILE="$STATE_DIR/ports.env"
KAFKA_POM="$SCRIPT_DIR/kafka/pom.xml"

export DEBIAN_FRONTEND=noninteractive
# kafkajs v2 prints a partitioner warning on every producer; it is noise for our readiness probe.
export KAFKAJS_NO_PARTITIONER_WARNING=1

ALL_SERVICES=(redis clickhouse kafka redis-cluster)

# Candidate port sets, first free one wins. The first set is the conventional one; the others exist
# only so that a machine where something else already listens there still gets working services.
# Whatever is chosen is remembered in .services/ports.env, and `env` prints it.
REDIS_CANDIDATES=("6380" "16380" "26380")
CLICKHOUSE_CANDIDATES=("8123 9000" "18123 19000" "28123 29000") # http native
KAFKA_CANDIDATES=("9092 9093" "19092 19093" "29092 29093")       # broker controller
# Three cluster masters; each also listens on its port + 10000 (the cluster bus), checked as well.
REDIS_CLUSTER_CANDIDATES=("7000 7001 7002" "7100 7101 7102" "7200 7201 7202")

REDIS_START_TIMEOUT=20
CLICKHOUSE_START_TIMEOUT=90
KAFKA_START_TIMEOUT=150
STOP_TIMEOUT=60

# ------------------------------------------------------------------------------------------------
# Output helpers: progress on stdout (except for `env`, which must print only the variables),
# errors on stderr.
# ------------------------------------------------------------------------------------------------
log() { printf '%s\n' "$*"; }
err() { printf 'services: ERROR: %s\n' "$*" >&2; }
die() {
  err "$*"
  exit 1
}

# Prints the last lines of each given log file to stderr, so a failed start explains itself.
show_log_tail() {
  local f
  for f in "$@"; do
    if [[ -s "$f" ]]; then
      printf -- '----- last lines of %s -----\n' "$f" >&2
      tail -n 40 "$f" >&2 || true
    fi
  done
}

# ------------------------------------------------------------------------------------------------
# Processes and ports
# ------------------------------------------------------------------------------------------------

# True when something listens on 127.0.0.1/0.0.0.0/[::] TCP port $1 (any process, ours or not).
port_in_use() {
  [[ -n "$(ss -ltnH "( sport = :$1 )" 2>/dev/null)" ]]
}

# Bash-only TCP probe (no nc on a fresh machine).
port_accepts() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# pid_alive PIDFILE PATTERN: true when the pidfile names a live process whose command line contains
# PATTERN. The pattern guards against a stale pidfile whose pid was reused by something else.
pid_alive() {
  local pidfile="$1" pattern="$2" pid cmdline
  [[ -s "$pidfile" ]] || return 1
  pid="$(tr -dc '0-9' <"$pidfile")"
  [[ -n "$pid" ]] || return 1
  # No `| grep -q` here: with pipefail an early-exiting grep can make a match look like a failure.
  cmdline="$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)" || return 1
  [[ "$cmdline" == *"$pattern"* ]]
}

# show_log_since FILE OFFSET: like show_log_tail, but only what was written after byte OFFSET (what
# the current start wrote), so a failed start does not show the previous run's shutdown.
show_log_since() {
  local f="$1" offset="${2:-0}"
  if [[ -s "$f" ]] && (($(stat -c %s "$f") > offset)); then
    printf -- '----- last lines of %s (this start) -----\n' "$f" >&2
    tail -c +"$((offset + 1))" "$f" | tail -n 40 >&2 || true
  fi
}

# log_has_since FILE OFFSET TEXT: TEXT occurs in FILE after byte OFFSET. grep reads to the end (no
# -q): with pipefail, an early exit would SIGPIPE tail and turn a match into a failure.
log_has_since() {
  [[ -f "$1" ]] || return 1
  tail -c +"$(($2 + 1))" "$1" | grep -F -- "$3" >/dev/null
}

log_size() { if [[ -f "$1" ]]; then stat -c %s "$1"; else echo 0; fi; }

read_pid() { tr -dc '0-9' <"$1" 2>/dev/null || true; }

# Closes every descriptor above 2 in the current (sub)shell; call it in the subshell that execs a
# daemon. Daemons otherwise inherit whatever the caller had open: our lock (fd 9, which would then
# be held forever) and any pipe of the calling shell or CI harness (which would then wait for an EOF
# that never comes while the daemon runs).
close_extra_fds() {
  local fd
  for fd in /proc/"$BASHPID"/fd/*; do
    fd="${fd##*/}"
    if [[ "$fd" =~ ^[0-9]+$ ]] && ((fd > 2)); then
      eval "exec $fd>&-" 2>/dev/null || true
    fi
  done
}

# stop_pid NAME PIDFILE PATTERN: TERM, wait for a clean shutdown, KILL as a last resort.
stop_pid() {
  local name="$1" pidfile="$2" pattern="$3" pid i
  if ! pid_alive "$pidfile" "$pattern"; then
    rm -f "$pidfile"
    log "$name: not running"
    return 0
  fi
  pid="$(read_pid "$pidfile")"
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < STOP_TIMEOUT * 2; i++)); do
    [[ -d "/proc/$pid" ]] || break
    sleep 0.5
  done
  if [[ -d "/proc/$pid" ]]; then
    err "$name (pid $pid) did not stop within ${STOP_TIMEOUT}s; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    sleep 1
  fi
  rm -f "$pidfile"
  log "$name: stopped"
}

# ------------------------------------------------------------------------------------------------
# Port bookkeeping (.services/ports.env)
# ------------------------------------------------------------------------------------------------
REDIS_PORT=""
CLICKHOUSE_HTTP_PORT=""
CLICKHOUSE_TCP_PORT=""
KAFKA_PORT=""
KAFKA_CONTROLLER_PORT=""
REDIS_CLUSTER_PORTS=""

load_ports() {
  if [[ -f "$PORTS_FILE" ]]; then
    # shellcheck disable=SC1090
    source "$PORTS_FILE"
  fi
  # Not chosen yet (fresh machine, nothing started): report what `up` would pick.
  [[ -n "$REDIS_PORT" ]] || set_ports redis "$(first_free_set "${REDIS_CANDIDATES[@]}")"
  [[ -n "$CLICKHOUSE_HTTP_PORT" && -n "$CLICKHOUSE_TCP_PORT" ]] ||
    set_ports clickhouse "$(first_free_set "${CLICKHOUSE_CANDIDATES[@]}")"
  [[ -n "$KAFKA_PORT" && -n "$KAFKA_CONTROLLER_PORT" ]] ||
    set_ports kafka "$(first_free_set "${KAFKA_CANDIDATES[@]}")"
  [[ -n "$REDIS_CLUSTER_PORTS" ]] || set_ports redis-cluster "$(first_free_set "${REDIS_CLUSTER_CANDIDATES[@]}")"
}

save_ports() {
  mkdir -p "$STATE_DIR"
  cat >"$PORTS_FILE.tmp" <<EOF
# Written by scripts/services/services.sh: the ports our own service instances use.
REDIS_PORT=$REDIS_PORT
CLICKHOUSE_HTTP_PORT=$CLICKHOUSE_HTTP_PORT
CLICKHOUSE_TCP_PORT=$CLICKHOUSE_TCP_PORT
KAFKA_PORT=$KAFKA_PORT
KAFKA_CONTROLLER_PORT=$KAFKA_CONTROLLER_PORT
REDIS_CLUSTER_PORTS="$REDIS_CLUSTER_PORTS"
EOF
  mv -f "$PORTS_FILE.tmp" "$PORTS_FILE"
}

# Echoes the first candidate set ("p1 p2 ...") whose ports are all free; the first set if none is.
first_free_set() {
  local set p busy
  for set in "$@"; do
    busy=0
    for p in $set; do
      if port_in_use "$p"; then busy=1; fi
      # A cluster node also needs its bus port (+10000).
      if [[ "$set" == *" "*" "* ]] && port_in_use "$((p + 10000))"; then busy=1; fi
    done
    if ((busy == 0)); then
      echo "$set"
      return 0
    fi
  done
  echo "$1"
}

set_ports() {
  local svc="$1" a b
  read -r a b <<<"$2"
  case "$svc" in
    redis) REDIS_PORT="$a" ;;
    clickhouse) CLICKHOUSE_HTTP_PORT="$a" CLICKHOUSE_TCP_PORT="$b" ;;
    kafka) KAFKA_PORT="$a" KAFKA_CONTROLLER_PORT="$b" ;;
    redis-cluster) REDIS_CLUSTER_PORTS="$2" ;;
  esac
}

# Before starting a stopped service: take the first candidate set whose ports are all free, i.e. the
# conventional ports whenever nothing else holds them, so the addresses stay predictable.
pick_ports_for_start() {
  local svc="$1" candidates=() chosen p
  case "$svc" in
    redis) candidates=("${REDIS_CANDIDATES[@]}") ;;
    clickhouse) candidates=("${CLICKHOUSE_CANDIDATES[@]}") ;;
    kafka) candidates=("${KAFKA_CANDIDATES[@]}") ;;
    redis-cluster) candidates=("${REDIS_CLUSTER_CANDIDATES[@]}") ;;
  esac
  chosen="$(first_free_set "${candidates[@]}")"
  for p in $chosen; do
    if port_in_use "$p"; then
      die "$svc: ports ${candidates[*]} are all taken by other processes (see: ss -ltnp)"
    fi
  done
  if [[ "$chosen" != "${candidates[0]}" ]]; then
    log "$svc: port(s) ${candidates[0]} already taken by another process; using $chosen instead"
  fi
  set_ports "$svc" "$chosen"
  save_ports
}

# ------------------------------------------------------------------------------------------------
# Installing (apt / Maven)
# ------------------------------------------------------------------------------------------------
APT_UPDATED=0

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
# through invoke-rc.d. There is no systemd/init here, and we do not want the packaged instances
# anyway, so a temporary policy-rc.d that denies every start is put in place for the install (only
# when the machine has none of its own) and removed afterwards.
TEMP_POLICY_RC=0

# Also run from the EXIT trap, so an interrupted install does not leave our policy-rc.d behind.
remove_temp_policy_rc() {
  if ((TEMP_POLICY_RC == 1)); then
    as_root rm -f /usr/sbin/policy-rc.d || true
    TEMP_POLICY_RC=0
  fi
}
trap remove_temp_policy_rc EXIT

apt_install() {
  local rc=0
  local log_file="$STATE_DIR/apt.log"
  mkdir -p "$STATE_DIR"
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    TEMP_POLICY_RC=1
    as_root sh -c 'printf "#!/bin/sh\n# temporary, from scripts/services/services.sh\nexit 101\n" >/usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d'
  fi
  log "installing Debian packages: $* (log: $log_file)"
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

ensure_common_tools() {
  local missing=()
  command -v curl >/dev/null 2>&1 || missing+=(curl)
  command -v ss >/dev/null 2>&1 || missing+=(iproute2)
  command -v flock >/dev/null 2>&1 || missing+=(util-linux)
  if ((${#missing[@]} > 0)); then apt_install "${missing[@]}"; fi
}

ensure_redis_installed() {
  local missing=()
  command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
  command -v redis-cli >/dev/null 2>&1 || missing+=(redis-tools)
  if ((${#missing[@]} > 0)); then apt_install "${missing[@]}"; fi
}

ensure_clickhouse_installed() {
  local missing=()
  command -v clickhouse-server >/dev/null 2>&1 || missing+=(clickhouse-server)
  command -v clickhouse-client >/dev/null 2>&1 || missing+=(clickhouse-client)
  if ((${#missing[@]} > 0)); then apt_install "${missing[@]}"; fi
}

KAFKA_DIR="$STATE_DIR/kafka"
KAFKA_LIBS="$KAFKA_DIR/libs"

# The jars are (re)fetched when missing or when the pom changed since the last fetch; Maven caches
# them in ~/.m2, so a re-fetch after `rm -rf .services` takes seconds.
ensure_kafka_installed() {
  local missing=() want_sha have_sha="" tmp
  command -v java >/dev/null 2>&1 || missing+=(default-jre-headless)
  command -v mvn >/dev/null 2>&1 || missing+=(maven)
  if ((${#missing[@]} > 0)); then apt_install "${missing[@]}"; fi

  want_sha="$(sha256sum "$KAFKA_POM" | cut -d' ' -f1)"
  [[ -f "$KAFKA_LIBS/.pom.sha256" ]] && have_sha="$(cat "$KAFKA_LIBS/.pom.sha256")"
  if [[ "$want_sha" == "$have_sha" ]] && compgen -G "$KAFKA_LIBS/kafka_2.13-*.jar" >/dev/null; then
    return 0
  fi
  log "kafka: fetching the broker jars from Maven Central (log: $KAFKA_DIR/mvn.log)"
  mkdir -p "$KAFKA_DIR"
  tmp="$KAFKA_DIR/libs.tmp"
  rm -rf "$tmp"
  if ! mvn -B -q -Dstyle.color=never -f "$KAFKA_POM" dependency:copy-dependencies \
    -DoutputDirectory="$tmp" -DincludeScope=runtime </dev/null >"$KAFKA_DIR/mvn.log" 2>&1; then
    show_log_tail "$KAFKA_DIR/mvn.log"
    die "kafka: Maven could not fetch the broker jars"
  fi
  compgen -G "$tmp/kafka_2.13-*.jar" >/dev/null || die "kafka: Maven ran but no kafka_2.13 jar in $tmp"
  echo "$want_sha" >"$tmp/.pom.sha256"
  # Swap in one step so a broker never sees a half-filled libs directory.
  rm -rf "$KAFKA_LIBS"
  mv "$tmp" "$KAFKA_LIBS"
}

# ------------------------------------------------------------------------------------------------
# Redis: Debian's redis-server binary, our own instance, nothing persisted.
# ------------------------------------------------------------------------------------------------
REDIS_DIR="$STATE_DIR/redis"
REDIS_PID="$REDIS_DIR/redis.pid"
REDIS_LOG="$REDIS_DIR/redis.log"

redis_running() { pid_alive "$REDIS_PID" "redis-server"; }
redis_address() { echo "redis://127.0.0.1:$REDIS_PORT"; }

redis_start() {
  local i log_off
  if redis_running; then
    log "redis: already running at $(redis_address) (pid $(read_pid "$REDIS_PID"))"
    return 0
  fi
  ensure_redis_installed
  pick_ports_for_start redis
  mkdir -p "$REDIS_DIR"
  rm -f "$REDIS_PID"
  log_off="$(log_size "$REDIS_LOG")"
  # Flags rather than a config file: --save "" / --appendonly no because a cache needs no
  # persistence; --dir keeps any stray dump inside .services; protected-mode stays on (loopback only).
  # Errors printed before daemonizing (bad flag, port taken) land in the same log, hence SC2094.
  # shellcheck disable=SC2094
  if ! (close_extra_fds && exec redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --daemonize yes \
    --pidfile "$REDIS_PID" --logfile "$REDIS_LOG" --dir "$REDIS_DIR" \
    --save "" --appendonly no) </dev/null >>"$REDIS_LOG" 2>&1; then
    show_log_since "$REDIS_LOG" "$log_off"
    die "redis: redis-server failed to start"
  fi
  for ((i = 0; i < REDIS_START_TIMEOUT * 2; i++)); do
    if [[ "$(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null)" == "PONG" ]] && redis_running; then
      log "redis: ready at $(redis_address) (pid $(read_pid "$REDIS_PID"))"
      return 0
    fi
    sleep 0.5
  done
  show_log_since "$REDIS_LOG" "$log_off"
  die "redis: no PONG on 127.0.0.1:$REDIS_PORT within ${REDIS_START_TIMEOUT}s"
}

redis_stop() { stop_pid redis "$REDIS_PID" "redis-server"; }

# ------------------------------------------------------------------------------------------------
# Redis Cluster: three masters (no replicas) from the same redis-server binary, for the tests that
# prove keys, scripts and batching stay within one hash slot. Nothing persisted: every start forms a
# fresh cluster (the node files are wiped), so a crashed run never leaves a half-formed one behind.
# ------------------------------------------------------------------------------------------------
RC_DIR="$STATE_DIR/redis-cluster"

rc_pidfile() { echo "$RC_DIR/$1/redis.pid"; }

redis-cluster_running() {
  local p
  [[ -n "$REDIS_CLUSTER_PORTS" ]] || return 1
  for p in $REDIS_CLUSTER_PORTS; do
    pid_alive "$(rc_pidfile "$p")" "redis-server" || return 1
  done
}

redis-cluster_address() {
  local p nodes=()
  for p in $REDIS_CLUSTER_PORTS; do nodes+=("127.0.0.1:$p"); done
  (
    IFS=,
    echo "redis+cluster://${nodes[*]}"
  )
}

redis-cluster_pids() {
  local p pids=()
  for p in $REDIS_CLUSTER_PORTS; do pids+=("$(read_pid "$(rc_pidfile "$p")")"); done
  echo "${pids[*]}"
}

redis-cluster_stop() {
  local p
  for p in $REDIS_CLUSTER_PORTS; do
    stop_pid "redis-cluster node $p" "$(rc_pidfile "$p")" "redis-server"
  done
}

redis-cluster_ok() {
  local p
  for p in $REDIS_CLUSTER_PORTS; do
    [[ "$(redis-cli -p "$p" cluster info 2>/dev/null | tr -d '\r' | grep '^cluster_state:')" == "cluster_state:ok" ]] || return 1
  done
}

redis-cluster_start() {
  local p i nodes=() log_file="$RC_DIR/create.log"
  if redis-cluster_running; then
    log "redis-cluster: already running at $(redis-cluster_address) (pids $(redis-cluster_pids))"
    return 0
  fi
  ensure_redis_installed
  # Some node may still run from a half-failed start: stop all so the cluster is formed afresh.
  redis-cluster_stop >/dev/null
  pick_ports_for_start redis-cluster
  for p in $REDIS_CLUSTER_PORTS; do
    rm -rf "${RC_DIR:?}/$p"
    mkdir -p "$RC_DIR/$p"
    # Same flags as the single Redis (no persistence, loopback, protected mode), plus cluster mode.
    # shellcheck disable=SC2094
    if ! (close_extra_fds && exec redis-server --port "$p" --bind 127.0.0.1 --daemonize yes \
      --cluster-enabled yes --cluster-config-file "$RC_DIR/$p/nodes.conf" --cluster-node-timeout 5000 \
      --pidfile "$(rc_pidfile "$p")" --logfile "$RC_DIR/$p/redis.log" --dir "$RC_DIR/$p" \
      --save "" --appendonly no) </dev/null >>"$RC_DIR/$p/redis.log" 2>&1; then
      show_log_tail "$RC_DIR/$p/redis.log"
      die "redis-cluster: node $p failed to start"
    fi
    nodes+=("127.0.0.1:$p")
  done
  for ((i = 0; i < REDIS_START_TIMEOUT * 2; i++)); do
    local all=1
    for p in $REDIS_CLUSTER_PORTS; do
      [[ "$(redis-cli -p "$p" ping 2>/dev/null)" == "PONG" ]] || all=0
    done
    ((all == 1)) && break
    sleep 0.5
  done
  # Slots split evenly over the three masters; --cluster-yes accepts the proposed layout.
  if ! redis-cli --cluster create "${nodes[@]}" --cluster-replicas 0 --cluster-yes </dev/null >"$log_file" 2>&1; then
    show_log_tail "$log_file"
    die "redis-cluster: forming the cluster failed"
  fi
  for ((i = 0; i < REDIS_START_TIMEOUT * 2; i++)); do
    if redis-cluster_ok && redis-cluster_running; then
      log "redis-cluster: ready at $(redis-cluster_address) (3 masters, pids $(redis-cluster_pids))"
      return 0
    fi
    sleep 0.5
  done
  show_log_tail "$log_file"
  die "redis-cluster: cluster_state not ok within ${REDIS_START_TIMEOUT}s"
}

# ------------------------------------------------------------------------------------------------
# ClickHouse: Debian's clickhouse-server 18.16, our own config under .services/clickhouse.
# ------------------------------------------------------------------------------------------------
CH_DIR="$STATE_DIR/clickhouse"
CH_CONFIG="$CH_DIR/config.xml"
CH_PID="$CH_DIR/clickhouse-server.pid"
CH_LOG_DIR="$CH_DIR/logs"

clickhouse_running() { pid_alive "$CH_PID" "$CH_CONFIG"; }
clickhouse_address() { echo "http://127.0.0.1:$CLICKHOUSE_HTTP_PORT"; }

# A complete, self-contained config (not an override of /etc/clickhouse-server) so that nothing the
# package ships or changes affects our instance. Rewritten on every start to pick up port changes.
clickhouse_write_config() {
  mkdir -p "$CH_DIR/data" "$CH_DIR/tmp" "$CH_DIR/user_files" "$CH_DIR/format_schemas" "$CH_LOG_DIR"
  cat >"$CH_CONFIG" <<EOF
<?xml version="1.0"?>
<!-- Generated by scripts/services/services.sh; edits are overwritten on the next start. -->
<yandex>
    <logger>
        <level>information</level>
        <log>$CH_LOG_DIR/clickhouse-server.log</log>
        <errorlog>$CH_LOG_DIR/clickhouse-server.err.log</errorlog>
        <size>100M</size>
        <count>3</count>
    </logger>

    <!-- Loopback only. No interserver/https ports: single node, no replication. -->
    <listen_host>127.0.0.1</listen_host>
    <http_port>$CLICKHOUSE_HTTP_PORT</http_port>
    <tcp_port>$CLICKHOUSE_TCP_PORT</tcp_port>

    <max_connections>1024</max_connections>
    <keep_alive_timeout>3</keep_alive_timeout>
    <max_concurrent_queries>100</max_concurrent_queries>
    <uncompressed_cache_size>1073741824</uncompressed_cache_size>
    <mark_cache_size>536870912</mark_cache_size>

    <!-- Trailing slashes matter for these paths in 18.16. -->
    <path>$CH_DIR/data/</path>
    <tmp_path>$CH_DIR/tmp/</tmp_path>
    <user_files_path>$CH_DIR/user_files/</user_files_path>
    <format_schema_path>$CH_DIR/format_schemas/</format_schema_path>

    <users_config>$CH_DIR/users.xml</users_config>
    <default_profile>default</default_profile>
    <default_database>default</default_database>

    <!-- Server time zone fixed to UTC: DateTime values are stored as UTC epochs anyway, and this
         makes their text form independent of the machine's TZ. -->
    <timezone>UTC</timezone>
    <mlock_executable>false</mlock_executable>

    <builtin_dictionaries_reload_interval>3600</builtin_dictionaries_reload_interval>
    <max_session_timeout>3600</max_session_timeout>
    <default_session_timeout>60</default_session_timeout>

    <query_log>
        <database>system</database>
        <table>query_log</table>
        <partition_by>toYYYYMM(event_date)</partition_by>
        <flush_interval_milliseconds>7500</flush_interval_milliseconds>
    </query_log>
</yandex>
EOF
  # The packaged users.xml uses incl="networks" (warns at every start) and lets `default` in from
  # anywhere; ours allows loopback only, user `default` with no password, stock settings otherwise
  # (no LowCardinality etc. switched on: code must work on a stock 18.16).
  cat >"$CH_DIR/users.xml" <<'EOF'
<?xml version="1.0"?>
<!-- Generated by scripts/services/services.sh; edits are overwritten on the next start. -->
<yandex>
    <profiles>
        <default>
            <max_memory_usage>10000000000</max_memory_usage>
            <use_uncompressed_cache>0</use_uncompressed_cache>
            <load_balancing>random</load_balancing>
        </default>
        <readonly>
            <readonly>1</readonly>
        </readonly>
    </profiles>
    <users>
        <default>
            <password></password>
            <networks>
                <ip>::1</ip>
                <ip>127.0.0.1</ip>
            </networks>
            <profile>default</profile>
            <quota>default</quota>
        </default>
    </users>
    <quotas>
        <default>
            <interval>
                <duration>3600</duration>
                <queries>0</queries>
                <errors>0</errors>
                <result_rows>0</result_rows>
                <read_rows>0</read_rows>
                <execution_time>0</execution_time>
            </interval>
        </default>
    </quotas>
</yandex>
EOF
}

clickhouse_ping() {
  [[ "$(curl -s --max-time 2 "http://127.0.0.1:$CLICKHOUSE_HTTP_PORT/ping" 2>/dev/null)" == "Ok." ]]
}

clickhouse_start() {
  local i version started_pid="" out_off err_off
  if clickhouse_running; then
    log "clickhouse: already running at $(clickhouse_address) (pid $(read_pid "$CH_PID"))"
    return 0
  fi
  ensure_clickhouse_installed
  pick_ports_for_start clickhouse
  clickhouse_write_config
  rm -f "$CH_PID"
  out_off="$(log_size "$CH_LOG_DIR/stdout.log")"
  err_off="$(log_size "$CH_LOG_DIR/clickhouse-server.err.log")"
  # --daemon forks and writes the pidfile itself; the parent returns at once. Run as root: the data
  # lives in the repo checkout, which the `clickhouse` system user could not write to.
  if ! (cd "$CH_DIR" && close_extra_fds &&
    exec clickhouse-server --config-file="$CH_CONFIG" --pid-file="$CH_PID" --daemon) \
    </dev/null >>"$CH_LOG_DIR/stdout.log" 2>&1; then
    show_log_since "$CH_LOG_DIR/stdout.log" "$out_off"
    show_log_since "$CH_LOG_DIR/clickhouse-server.err.log" "$err_off"
    die "clickhouse: clickhouse-server failed to start"
  fi
  for ((i = 0; i < CLICKHOUSE_START_TIMEOUT * 2; i++)); do
    if clickhouse_ping && clickhouse_running; then
      version="$(curl -s --max-time 5 "$(clickhouse_address)/?query=SELECT%20version()" || true)"
      log "clickhouse: ready at $(clickhouse_address) (native tcp 127.0.0.1:$CLICKHOUSE_TCP_PORT, version ${version:-?}, pid $(read_pid "$CH_PID"))"
      return 0
    fi
    # The pidfile appears shortly after the fork; once it did, a dead pid means a failed start.
    if [[ -s "$CH_PID" ]]; then
      started_pid="$(read_pid "$CH_PID")"
    fi
    if [[ -n "$started_pid" && ! -d "/proc/$started_pid" ]]; then
      break
    fi
    sleep 0.5
  done
  show_log_since "$CH_LOG_DIR/stdout.log" "$out_off"
  show_log_since "$CH_LOG_DIR/clickhouse-server.err.log" "$err_off"
  die "clickhouse: no 'Ok.' from $(clickhouse_address)/ping within ${CLICKHOUSE_START_TIMEOUT}s"
}

clickhouse_stop() { stop_pid clickhouse "$CH_PID" "$CH_CONFIG"; }

# ------------------------------------------------------------------------------------------------
# Kafka: Apache Kafka 4.x from Maven Central (version in kafka/pom.xml), KRaft, one combined
# broker+controller node with a static quorum (controller.quorum.voters), so formatting needs none of
# 4.x's dynamic-quorum flags (--standalone / --initial-controllers).
# ------------------------------------------------------------------------------------------------
KAFKA_PID="$KAFKA_DIR/kafka.pid"
KAFKA_CONFIG="$KAFKA_DIR/server.properties"
KAFKA_LOG_DIR="$KAFKA_DIR/logs"
KAFKA_DATA="$KAFKA_DIR/data"

kafka_running() { pid_alive "$KAFKA_PID" "kafka.Kafka $KAFKA_CONFIG"; }
kafka_address() { echo "127.0.0.1:$KAFKA_PORT"; }

kafka_java_opts() {
  # Modest heap (the machine has 2 cores and other services); override with KAFKA_HEAP_OPTS.
  # GC flags are the ones kafka-run-class.sh uses.
  # shellcheck disable=SC2086 # KAFKA_HEAP_OPTS is a list of flags: split it on purpose.
  printf '%s\n' ${KAFKA_HEAP_OPTS:--Xms256m -Xmx512m} \
    -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 \
    -XX:+ExplicitGCInvokesConcurrent -Djava.awt.headless=true \
    "-Dlog4j2.configurationFile=$KAFKA_DIR/log4j2.xml" "-Dkafka.logs.dir=$KAFKA_LOG_DIR"
}

kafka_write_config() {
  mkdir -p "$KAFKA_DATA" "$KAFKA_LOG_DIR"
  cat >"$KAFKA_CONFIG" <<EOF
# Generated by scripts/services/services.sh; edits are overwritten on the next start.
# KRaft, one node that is both broker and controller, loopback only.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$KAFKA_CONTROLLER_PORT
listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT,CONTROLLER://127.0.0.1:$KAFKA_CONTROLLER_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$KAFKA_DATA

num.partitions=6
default.replication.factor=1
min.insync.replicas=1
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
auto.create.topics.enable=true
# Consumers in tests join at once instead of waiting 3 s for more members.
group.initial.rebalance.delay.ms=0

num.network.threads=3
num.io.threads=4
log.retention.hours=168
log.segment.bytes=1073741824
EOF
  # Kafka 4 logs through log4j2 (log4j 1.x / reload4j are gone); a 3.x log4j.properties is unused.
  rm -f "$KAFKA_DIR/log4j.properties"
  cat >"$KAFKA_DIR/log4j2.xml" <<'EOF'
<?xml version="1.0" encoding="UTF-8"?>
<!-- Generated by scripts/services/services.sh. The broker logs to .services/kafka/logs/server.log. -->
<Configuration status="WARN">
  <Appenders>
    <RollingFile name="file" fileName="${sys:kafka.logs.dir}/server.log" filePattern="${sys:kafka.logs.dir}/server.log.%i">
      <PatternLayout pattern="[%d] %p %m (%c)%n"/>
      <Policies><SizeBasedTriggeringPolicy size="50 MB"/></Policies>
      <DefaultRolloverStrategy max="3"/>
    </RollingFile>
  </Appenders>
  <Loggers>
    <Root level="INFO"><AppenderRef ref="file"/></Root>
    <Logger name="kafka.request.logger" level="WARN"/>
    <Logger name="state.change.logger" level="WARN"/>
    <Logger name="kafka.log.LogCleaner" level="WARN"/>
    <Logger name="kafka.authorizer.logger" level="WARN"/>
  </Loggers>
</Configuration>
EOF
}

# KRaft storage must be formatted once with a cluster id before the first start; never again
# (re-formatting would refuse, and wiping would lose topics).
kafka_format_storage() {
  local cluster_id java_opts
  [[ -f "$KAFKA_DATA/meta.properties" ]] && return 0
  mapfile -t java_opts < <(kafka_java_opts)
  if [[ ! -s "$KAFKA_DIR/cluster.id" ]]; then
    java "${java_opts[@]}" -cp "$KAFKA_LIBS/*" kafka.tools.StorageTool random-uuid \
      </dev/null 2>>"$KAFKA_LOG_DIR/storage-tool.log" | tr -d '[:space:]' >"$KAFKA_DIR/cluster.id" || true
    [[ -s "$KAFKA_DIR/cluster.id" ]] || {
      show_log_tail "$KAFKA_LOG_DIR/storage-tool.log"
      die "kafka: could not generate a cluster id"
    }
  fi
  cluster_id="$(cat "$KAFKA_DIR/cluster.id")"
  log "kafka: formatting KRaft storage in $KAFKA_DATA (cluster id $cluster_id)"
  if ! java "${java_opts[@]}" -cp "$KAFKA_LIBS/*" kafka.tools.StorageTool format \
    -t "$cluster_id" -c "$KAFKA_CONFIG" --ignore-formatted </dev/null >>"$KAFKA_LOG_DIR/storage-tool.log" 2>&1; then
    show_log_tail "$KAFKA_LOG_DIR/storage-tool.log"
    die "kafka: formatting the storage failed"
  fi
}

# A real metadata round-trip through kafkajs (installed in node_modules) proves clients can use the
# broker, not just that the port is open. Skipped when node or kafkajs is not there.
kafka_metadata_ok() {
  local kafkajs="$REPO_ROOT/node_modules/kafkajs"
  if ! command -v node >/dev/null 2>&1 || [[ ! -d "$kafkajs" ]]; then
    return 0
  fi
  timeout 20 node -e '
    const { Kafka, logLevel } = require(process.argv[1]);
    const kafka = new Kafka({ clientId: "services-sh", brokers: [process.argv[2]], logLevel: logLevel.NOTHING,
      connectionTimeout: 3000, requestTimeout: 5000, retry: { retries: 1 } });
    const admin = kafka.admin();
    admin.connect()
      .then(() => admin.describeCluster())
      .then((c) => { if (!c.controller && c.controller !== 0) throw new Error("no controller yet"); return admin.listTopics(); })
      .then(() => admin.disconnect())
      .then(() => process.exit(0), (e) => { console.error(e && e.message); process.exit(1); });
  ' "$kafkajs" "$(kafka_address)" </dev/null >/dev/null 2>>"$KAFKA_LOG_DIR/readiness.log"
}

kafka_start() {
  local i pid log_offset java_opts=() started=0 ready_off
  if kafka_running; then
    log "kafka: already running at $(kafka_address) (pid $(read_pid "$KAFKA_PID"))"
    return 0
  fi
  ensure_kafka_installed
  pick_ports_for_start kafka
  kafka_write_config
  kafka_format_storage
  mapfile -t java_opts < <(kafka_java_opts)
  # Only look at what this start writes to server.log (it is appended to across restarts).
  log_offset="$(log_size "$KAFKA_LOG_DIR/server.log")"
  ready_off="$(log_size "$KAFKA_LOG_DIR/readiness.log")"
  rm -f "$KAFKA_PID"
  # setsid+nohup: the broker must outlive this script and the shell/CI job that ran it, and must not
  # hold any of the caller's descriptors. $! is java's own pid: the subshell, setsid (not a process
  # group leader here, so it does not fork) and nohup all exec.
  (close_extra_fds && exec setsid nohup java "${java_opts[@]}" -cp "$KAFKA_LIBS/*" kafka.Kafka "$KAFKA_CONFIG") \
    </dev/null >"$KAFKA_LOG_DIR/kafka.out" 2>&1 &
  pid=$!
  echo "$pid" >"$KAFKA_PID"
  for ((i = 0; i < KAFKA_START_TIMEOUT; i++)); do
    # Checked by pid only: for a moment after the fork the pid is still our subshell, not java yet.
    if [[ ! -d "/proc/$pid" ]]; then
      show_log_tail "$KAFKA_LOG_DIR/kafka.out"
      show_log_since "$KAFKA_LOG_DIR/server.log" "$log_offset"
      rm -f "$KAFKA_PID"
      die "kafka: the broker process exited during startup"
    fi
    if ((started == 0)) && log_has_since "$KAFKA_LOG_DIR/server.log" "$log_offset" 'Kafka Server started'; then
      started=1
    fi
    if ((started == 1)) && kafka_running && port_accepts "$KAFKA_PORT" && kafka_metadata_ok; then
      log "kafka: ready at $(kafka_address) (KRaft, controller 127.0.0.1:$KAFKA_CONTROLLER_PORT, pid $pid)"
      return 0
    fi
    sleep 1
  done
  show_log_tail "$KAFKA_LOG_DIR/kafka.out"
  show_log_since "$KAFKA_LOG_DIR/server.log" "$log_offset"
  show_log_since "$KAFKA_LOG_DIR/readiness.log" "$ready_off"
  die "kafka: not ready within ${KAFKA_START_TIMEOUT}s (still running as pid $pid; stop it with: $0 stop-one kafka)"
}

kafka_stop() { stop_pid kafka "$KAFKA_PID" "kafka.Kafka $KAFKA_CONFIG"; }

# ------------------------------------------------------------------------------------------------
# Subcommands
# ------------------------------------------------------------------------------------------------

# Serialises up/down/start-one/stop-one between concurrent callers (several engineers, CI).
# Every daemon is started through close_extra_fds, so none of them inherits (and holds) fd 9.
take_lock() {
  mkdir -p "$STATE_DIR"
  exec 9>"$STATE_DIR/.lock"
  if ! flock -w 900 9; then
    die "another services.sh run holds $STATE_DIR/.lock for more than 15 minutes"
  fi
}

valid_service() {
  case "${1:-}" in
    redis | clickhouse | kafka | redis-cluster) return 0 ;;
    *) die "unknown service '${1:-}' (expected one of: ${ALL_SERVICES[*]})" ;;
  esac
}

service_running() { "${1}_running"; }
service_address() { "${1}_address"; }

cmd_up() {
  local svc t0
  t0=$SECONDS
  take_lock
  ensure_common_tools
  load_ports
  for svc in "${ALL_SERVICES[@]}"; do
    "${svc}_start"
  done
  log "all services up ($((SECONDS - t0))s). Export their addresses with: eval \"\$(bash scripts/services/services.sh env | sed 's/^/export /')\""
}

cmd_down() {
  local svc
  take_lock
  load_ports
  # Reverse order: Kafka first (it is the slowest to stop cleanly), Redis last.
  for svc in kafka clickhouse redis-cluster redis; do
    "${svc}_stop"
  done
}

cmd_start_one() {
  valid_service "${1:-}"
  take_lock
  ensure_common_tools
  load_ports
  "${1}_start"
}

cmd_stop_one() {
  valid_service "${1:-}"
  take_lock
  load_ports
  "${1}_stop"
}

# Exit 0 when every service runs, 3 (the LSB "not running" code) otherwise, so that
# `services.sh status || services.sh up` works.
cmd_status() {
  local svc state pidfile pid all=0
  load_ports
  for svc in "${ALL_SERVICES[@]}"; do
    case "$svc" in
      redis) pidfile="$REDIS_PID" ;;
      clickhouse) pidfile="$CH_PID" ;;
      kafka) pidfile="$KAFKA_PID" ;;
      redis-cluster) pidfile="" ;;
    esac
    if service_running "$svc"; then
      state="running"
      if [[ -n "$pidfile" ]]; then pid=" (pid $(read_pid "$pidfile"))"; else pid=" (pids $(redis-cluster_pids))"; fi
    else
      state="stopped"
      pid=""
      all=3
    fi
    printf '%-13s %-8s %s%s\n' "$svc" "$state" "$(service_address "$svc")" "$pid"
  done
  return "$all"
}

# Only the variables on stdout, so `export $(services.sh env)` or `eval` works. Works while the
# services are down (prints where they are / will be).
cmd_env() {
  load_ports
  printf 'REDIS_URL=%s\n' "$(redis_address)"
  printf 'KAFKA_BROKERS=%s\n' "$(kafka_address)"
  printf 'CLICKHOUSE_URL=%s\n' "$(clickhouse_address)"
  printf 'REDIS_CLUSTER_URL=%s\n' "$(redis-cluster_address)"
}

usage() {
  cat >&2 <<EOF
usage: $0 <command>
  up                  install what is missing, start every service that is not running
  down                stop our service instances (installed packages stay)
  status              one line per service: running/stopped and its address (exit 3 if any stopped)
  env                 print REDIS_URL=, KAFKA_BROKERS=, CLICKHOUSE_URL=, REDIS_CLUSTER_URL= lines (nothing else)
  start-one <name>    start one service ($(
    IFS='|'
    echo "${ALL_SERVICES[*]}"
  ))
  stop-one <name>     stop one service
EOF
}

main() {
  local cmd="${1:-}"
  shift || true
  case "$cmd" in
    up) cmd_up ;;
    down) cmd_down ;;
    status) cmd_status ;;
    env) cmd_env ;;
    start-one) cmd_start_one "$@" ;;
    stop-one) cmd_stop_one "$@" ;;
    -h | --help | help)
      usage
      exit 0
      ;;
    *)
      usage
      exit 2
      ;;
  esac
}

main "$@"
