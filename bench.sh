#!/usr/bin/env bash
#
# bench.sh - run the lab's wrk matrix: apps x containers x pool sizes x wrk settings.
#
# What it does, top to bottom:
#   1. checks every setting, the tools (wrk, curl, python3, a JDK), ports and `ulimit -n`,
#      builds the jars if they are missing or older than the sources, and prints the environment;
#   2. starts remote-sleep (the slow backend) once and runs one calibration cell per wrk setting:
#      the same wrk command straight at remote-sleep. Its req/s is the ceiling this box and this
#      closed-loop window can reach (lab-notes trap 14); every cell is reported as a % of it;
#   3. for each cell: starts the app (or reuses the previous one when it is the same app,
#      container and pool size and has drained), verifies one /call, warms it up unrecorded,
#      resets its /stats, runs wrk with a Lua hook that writes JSON, and reads /stats at once;
#   4. rewrites results.json / .md / .csv after every cell, so Ctrl-C keeps finished cells.
#
# USAGE: ./bench.sh [--help]
#        Every setting is an environment variable (see "### defaults" below, or --help);
#        `make bench VAR=value ...` passes them through.
#
# REQUIREMENTS: Linux, bash 4+, python3, a JDK 17+ (bench/java-home.sh picks the newest >= 21),
#   Maven for the build, curl and wrk (installed with apt-get when missing and run as root).
#
# OVERHEAD: wrk, the app and remote-sleep share this machine's cores (lab-notes trap 7), so each
#   cell records CPU use: the box's % busy and the cores used by the app, remote-sleep and wrk.
#   Per cell the harness adds an app start + warm-up (fresh apps only) and a drain wait.
#
set -euo pipefail

### defaults: the reference experiment. The matrix is data: override any of these from the
### environment, eg, THREADS="1 8 200" ./bench.sh   (lists are space- or comma-separated).
: "${APPS:=sync-servlet sync-mvc async-servlet async-mvc nio-servlet webflux}"
: "${CONTAINERS:=jetty tomcat}"
: "${THREADS:=1 200}"        # threads that may run application code (--threads of every app)
: "${WRK_THREADS:=10 100}"   # wrk -t
: "${CONNECTIONS:=100}"      # wrk -c
: "${DURATION:=10s}"         # wrk -d for every measured cell
: "${SLEEP_MS:=1000}"        # remote-sleep's delay: what every /call waits for
: "${WRK_TIMEOUT:=}"         # wrk --timeout; empty = DURATION + 20 s (see below)
: "${WARMUP:=1s}"            # unrecorded warm-up of a freshly started app (fast calls); 0 = none
: "${REMOTE_PORT:=9000}"
: "${APP_PORT:=8080}"
: "${ADMIN_PORT:=8081}"
: "${RESULTS_DIR:=results}"  # runs go to $RESULTS_DIR/<UTC stamp>/, $RESULTS_DIR/latest links the last
: "${START_TIMEOUT:=60}"     # seconds a server may take to answer after its start
: "${JAVA_OPTS:=}"           # extra JVM flags for every server, eg, "-Xmx512m"
: "${APP_ARGS:=}"            # extra app flags, eg, "--client-max-connections 16"
# wrk's default --timeout is 2 s, and wrk 4 leaves every slower response out of all latency
# figures (lab-notes trap 2). A response cannot take longer than the run, so a timeout of
# DURATION + 20 s hides nothing; the cells still report "slow_2s", responses over 2 s.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CLK_TCK=$(getconf CLK_TCK)     # /proc/PID/stat counts CPU time in these ticks
REASON=""                      # why the last check failed (set by wait_ready, verify_app, run_wrk)
LUA=bench/wrk-json.lua
KNOWN_APPS="sync-servlet sync-mvc async-servlet async-mvc nio-servlet webflux"
KNOWN_CONTAINERS="jetty tomcat"
# Which module's jar serves each app id.
declare -A MODULE_OF=(
    [sync-servlet]=sync-servlet [sync-mvc]=sync-servlet
    [async-servlet]=async-servlet [async-mvc]=async-servlet
    [nio-servlet]=nio-servlet [webflux]=webflux-app
)
# Thread-per-request apps: at most `threads` requests in flight, so their Little's-law bound is
# min(connections, threads) / sleep, and requests beyond the pool queue inside the container.
SYNC_APPS="sync-servlet sync-mvc"

### helpers

usage() {
    cat <<EOF
Usage: ./bench.sh [--help]      (settings are environment variables)

Runs wrk against every app x container x pool size x wrk setting and writes
\$RESULTS_DIR/<UTC stamp>/results.{md,json,csv} (+ raw wrk output and server logs).

Settings (current value):
  APPS="$APPS"
        known: $KNOWN_APPS
  CONTAINERS="$CONTAINERS"       known: $KNOWN_CONTAINERS
  THREADS="$THREADS"             pool sizes: threads that may run application code
  WRK_THREADS="$WRK_THREADS"        wrk -t, each <= every CONNECTIONS value
  CONNECTIONS="$CONNECTIONS"          wrk -c
  DURATION=$DURATION  WARMUP=$WARMUP  WRK_TIMEOUT=${WRK_TIMEOUT:-DURATION+20s}   (N, Ns, Nm or Nh)
  SLEEP_MS=$SLEEP_MS          remote-sleep delay, 1..60000
  REMOTE_PORT=$REMOTE_PORT APP_PORT=$APP_PORT ADMIN_PORT=$ADMIN_PORT   (all on 127.0.0.1)
  RESULTS_DIR=$RESULTS_DIR  START_TIMEOUT=$START_TIMEOUT  JAVA_OPTS="$JAVA_OPTS"  APP_ARGS="$APP_ARGS"

Examples:
  ./bench.sh                                          # the reference experiment: 48 cells, ~10 min
  APPS="async-servlet sync-servlet" THREADS=1 WRK_THREADS=10 ./bench.sh
  APPS=webflux CONTAINERS=tomcat THREADS="1 4" CONNECTIONS="100 1000" ./bench.sh
  APP_ARGS="--client-max-connections 16" APPS=webflux ./bench.sh   # the 2021 write-up's trap
  make bench DURATION=30s && make compare A=results/<older stamp> B=results/latest
EOF
}

# A setting is wrong: say which, show the usage, exit 2 (nothing has been started yet).
usage_error() {
    echo "ERROR: $*" >&2
    usage >&2
    exit 2
}

# Something in the environment is wrong (port taken, tool missing): say what to do, exit 1.
die() {
    echo "ERROR: $*" >&2
    exit 1
}

# Seconds in a wrk-style duration: 10 -> 10, 10s -> 10, 2m -> 120, 1h -> 3600.
seconds_of() {
    local n=${1%[smh]}
    case $1 in
        *m) echo $((n * 60)) ;;
        *h) echo $((n * 3600)) ;;
        *) echo "$n" ;;
    esac
}

# 612 -> 10m12s
human_time() {
    local s=$1
    if ((s >= 60)); then printf '%dm%02ds' $((s / 60)) $((s % 60)); else printf '%ds' "$s"; fi
}

now_us() { echo "${EPOCHREALTIME//[.,]/}"; }

# true when something accepts TCP connections on 127.0.0.1:$1
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# GET/POST a local URL, print the body; fails on connection errors and HTTP errors.
http() { curl -sS --fail --max-time 5 "$@"; }

# The integer value of "key" in a flat JSON text: json_int '{"inFlight":3}' inFlight -> 3
json_int() { sed -n "s/.*\"$2\"[[:space:]]*:[[:space:]]*\(-\{0,1\}[0-9][0-9]*\).*/\1/p" <<<"$1"; }

# user+system CPU ticks a process has used so far (fields 14 and 15 of /proc/PID/stat).
proc_ticks() {
    local stat rest
    stat=$(<"/proc/$1/stat") || { echo 0; return; }
    rest=${stat##*) }                    # drop "pid (comm) ", comm may hold spaces
    read -ra f <<<"$rest"
    echo $((f[11] + f[12]))
}

# "busy total" jiffies of the whole box from the first line of /proc/stat.
box_ticks() {
    local _cpu user nice system idle iowait irq softirq steal _rest
    read -r _cpu user nice system idle iowait irq softirq steal _rest </proc/stat
    local busy=$((user + nice + system + irq + softirq + steal))
    echo "$busy $((busy + idle + iowait))"
}

# Sets CHILDREN_CPU_MS: CPU used by this shell's finished children (2nd line of bash `times`).
# Read around the wrk command, the difference is wrk's own CPU: nothing else finishes meanwhile.
# It must run in this shell: in $(...) `times` would describe the subshell.
children_cpu() {
    local _self u s
    times >"$RUN_DIR/.times"
    { read -r _self; read -r u s; } <"$RUN_DIR/.times"   # "0m1.234s 0m0.567s"
    CHILDREN_CPU_MS=$(awk -v u="$u" -v s="$s" 'function ms(t) { split(t, a, "m"); return (a[1] * 60 + a[2]) * 1000 }
        BEGIN { printf "%d", ms(u) + ms(s) }')
}

# Append key=value lines to a file that bench/report.py reads.
put() {
    local file=$1
    shift
    printf '%s\n' "$@" >>"$file"
}

# Stop a process this script started: TERM, up to 5 s, then KILL; reap it.
# stop_pid PID KILL: KILL at once (for a server whose shutdown we need nothing from).
stop_pid() {
    local pid=$1 signal=${2:-TERM}
    [[ -n "$pid" ]] || return 0
    # One redirect for the group: it also silences bash's "Killed" notice for the reaped job.
    {
        if kill -s "$signal" "$pid"; then
            for _ in {1..100}; do
                kill -0 "$pid" || break
                sleep 0.05
            done
            kill -9 "$pid" || true
        fi
        wait "$pid" || true
    } 2>/dev/null
}

# Wait until a server answers: its process lives, every given port accepts, and the stats URL
# answers. Polls every 50 ms, at most START_TIMEOUT seconds; on failure REASON says why.
wait_ready() {
    local pid=$1 stats_url=$2 log=$3
    shift 3
    local deadline=$(($(now_us) + START_TIMEOUT * 1000000)) port ok
    while (($(now_us) < deadline)); do
        if ! kill -0 "$pid" 2>/dev/null; then
            REASON="exited at start: $(grep -m1 -E 'ERROR|Exception' "$log" || tail -n 1 "$log")"
            return 1
        fi
        ok=1
        for port in "$@"; do port_open "$port" || ok=0; done
        if ((ok)) && http "$stats_url" >/dev/null 2>&1; then return 0; fi
        sleep 0.05
    done
    REASON="did not answer within ${START_TIMEOUT}s (see ${log#"$RUN_DIR"/})"
    return 1
}

# Wait (at most $2 seconds) until the server behind stats URL $1 has nothing in flight and
# nothing queued for a pool thread (remote-sleep reports no queue).
wait_drained() {
    local url=$1 deadline=$(($(now_us) + $2 * 1000000)) stats
    while (($(now_us) < deadline)); do
        stats=$(http "$url" 2>/dev/null) || stats=""
        [[ "$(json_int "$stats" inFlight)" == 0 && "$(json_int "$stats" queued)" =~ ^0?$ ]] && return 0
        sleep 0.05
    done
    return 1
}

# wrk, curl missing: install Debian's packages when we are root with apt, else say how.
ensure_tools() {
    local missing=() tool
    for tool in wrk curl; do command -v "$tool" >/dev/null || missing+=("$tool"); done
    ((${#missing[@]} == 0)) && return 0
    if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
        echo "installing ${missing[*]} with apt-get"
        { apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null; } \
            || die "apt-get install ${missing[*]} failed"
    else
        die "${missing[*]} not found: install it (Debian/Ubuntu: sudo apt-get install -y ${missing[*]})"
    fi
}

### process options

case "${1:-}" in
    -h | --help) usage; exit 0 ;;
    "") ;;
    *) usage_error "unknown argument '$1' (settings are environment variables)" ;;
esac

### validate every setting before starting anything

# Lists: "a b", "a,b" and "a, b" all work.
read -ra APP_LIST <<<"${APPS//,/ }"
read -ra CONTAINER_LIST <<<"${CONTAINERS//,/ }"
read -ra THREAD_LIST <<<"${THREADS//,/ }"
read -ra WRK_THREAD_LIST <<<"${WRK_THREADS//,/ }"
read -ra CONNECTION_LIST <<<"${CONNECTIONS//,/ }"

is_count() { [[ "$1" =~ ^[1-9][0-9]{0,6}$ ]]; }
is_duration() { [[ "$1" =~ ^[1-9][0-9]{0,5}[smh]?$ ]]; }

((${#APP_LIST[@]})) || usage_error "APPS is empty"
for a in "${APP_LIST[@]}"; do
    [[ " $KNOWN_APPS " == *" $a "* ]] || usage_error "unknown app '$a' in APPS (known: $KNOWN_APPS)"
done
((${#CONTAINER_LIST[@]})) || usage_error "CONTAINERS is empty"
for c in "${CONTAINER_LIST[@]}"; do
    [[ " $KNOWN_CONTAINERS " == *" $c "* ]] \
        || usage_error "unknown container '$c' in CONTAINERS (known: $KNOWN_CONTAINERS)"
done
# check_counts NAME VALUE...: every value a positive integer, at least one.
check_counts() {
    local var=$1 v
    shift
    (($#)) || usage_error "$var is empty"
    for v; do is_count "$v" || usage_error "$var: '$v' is not a positive integer"; done
}
check_counts THREADS "${THREAD_LIST[@]}"
check_counts WRK_THREADS "${WRK_THREAD_LIST[@]}"
check_counts CONNECTIONS "${CONNECTION_LIST[@]}"
for t in "${WRK_THREAD_LIST[@]}"; do
    for c in "${CONNECTION_LIST[@]}"; do
        ((t <= c)) || usage_error "WRK_THREADS=$t > CONNECTIONS=$c: wrk needs at least one connection per thread"
    done
done
is_duration "$DURATION" || usage_error "DURATION: '$DURATION' is not a duration like 10s, 2m or 30"
[[ "$WARMUP" == 0 ]] || is_duration "$WARMUP" || usage_error "WARMUP: '$WARMUP' is not a duration like 2s (or 0)"
DURATION_S=$(seconds_of "$DURATION")
WARMUP_S=$(seconds_of "$WARMUP")
WRK_TIMEOUT=${WRK_TIMEOUT:-$((DURATION_S + 20))s}
is_duration "$WRK_TIMEOUT" || usage_error "WRK_TIMEOUT: '$WRK_TIMEOUT' is not a duration like 30s"
WRK_TIMEOUT_S=$(seconds_of "$WRK_TIMEOUT")
{ [[ "$SLEEP_MS" =~ ^[1-9][0-9]{0,4}$ ]] && ((SLEEP_MS <= 60000)); } \
    || usage_error "SLEEP_MS: '$SLEEP_MS' is not an integer in 1..60000"
for var in REMOTE_PORT APP_PORT ADMIN_PORT; do
    { [[ "${!var}" =~ ^[1-9][0-9]{0,4}$ ]] && ((${!var} <= 65535)); } || usage_error "$var: '${!var}' is not a port number"
done
((REMOTE_PORT != APP_PORT && REMOTE_PORT != ADMIN_PORT && APP_PORT != ADMIN_PORT)) \
    || usage_error "REMOTE_PORT, APP_PORT and ADMIN_PORT must differ"
is_count "$START_TIMEOUT" || usage_error "START_TIMEOUT: '$START_TIMEOUT' is not a positive integer"
[[ -n "$RESULTS_DIR" ]] || usage_error "RESULTS_DIR is empty"
read -ra JAVA_OPT_LIST <<<"$JAVA_OPTS"
read -ra APP_ARG_LIST <<<"$APP_ARGS"

### check the machine

cd "$ROOT"
ensure_tools
command -v python3 >/dev/null || die "python3 not found (Debian: apt-get install -y python3)"
JAVA_HOME=$(bench/java-home.sh) || die "no JDK: set JAVA_HOME"
export JAVA_HOME
JAVA="$JAVA_HOME/bin/java"
JAVA_VERSION=$("$JAVA" -version 2>&1 | head -n 1)
java_major=$(sed -n 's/.*version "\([0-9]*\).*/\1/p' <<<"$JAVA_VERSION")
((${java_major:-0} >= 17)) || die "$JAVA is '$JAVA_VERSION'; the lab needs JDK 17+ (set JAVA_HOME)"

for var in REMOTE_PORT APP_PORT ADMIN_PORT; do
    ! port_open "${!var}" || die "port ${!var} ($var) is in use on 127.0.0.1: stop what holds it or set $var"
done

# Every connection is a file descriptor in wrk, in the app (plus its client connections) and in
# remote-sleep (lab-notes trap 13): raise the soft limit to the hard one when it is lower.
hard_nofile=$(ulimit -Hn)
if [[ "$hard_nofile" != "$(ulimit -Sn)" ]]; then ulimit -n "$hard_nofile" 2>/dev/null || true; fi
NOFILE=$(ulimit -Sn)
max_conns=$(printf '%s\n' "${CONNECTION_LIST[@]}" | sort -n | tail -n 1)
if [[ "$NOFILE" != unlimited ]] && ((NOFILE < 2 * max_conns + 256)); then
    echo "WARNING: ulimit -n is $NOFILE, too low for $max_conns connections (app: 2 per request)" >&2
fi

# Build when a jar is missing or older than any source or pom (tests are `make test`'s job).
modules=(remote-sleep)
for a in "${APP_LIST[@]}"; do
    [[ " ${modules[*]} " == *" ${MODULE_OF[$a]} "* ]] || modules+=("${MODULE_OF[$a]}")
done
stale=""
for m in "${modules[@]}"; do
    jar="$m/target/$m.jar"
    if [[ ! -f "$jar" ]] || [[ -n $(find pom.xml "$m/pom.xml" "$m/src" lab-common/pom.xml lab-common/src \
        -newer "$jar" -print -quit 2>/dev/null) ]]; then stale+=" $m"; fi
done
if [[ -n "$stale" ]]; then
    command -v mvn >/dev/null || die "the jars of$stale need a build and mvn is not installed (Debian: apt-get install -y maven)"
    echo "building (jars missing or older than sources:$stale): mvn -B -q package -DskipTests"
    mvn -B -q -Dstyle.color=never package -DskipTests || die "the build failed; run: JAVA_HOME=$JAVA_HOME mvn -B package -DskipTests"
fi

### the run directory: results/<UTC stamp>/, linked from results/latest

STAMP=$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$RESULTS_DIR"
RUN_DIR="$RESULTS_DIR/$STAMP"
n=1
while [[ -e "$RUN_DIR" ]]; do RUN_DIR="$RESULTS_DIR/$STAMP-$((n++))"; done
mkdir -p "$RUN_DIR/logs" "$RUN_DIR/calibration" "$RUN_DIR/cells"
ln -sfn "$(basename "$RUN_DIR")" "$RESULTS_DIR/latest"
META="$RUN_DIR/meta.txt"

pom_version() { sed -n "s:.*<$1>\(.*\)</$1>.*:\1:p" pom.xml | head -n 1; }
cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
os_name=$(sed -n 's/^PRETTY_NAME="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' /etc/os-release 2>/dev/null || true)
put "$META" "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
    "apps=${APP_LIST[*]}" "containers=${CONTAINER_LIST[*]}" "threads=${THREAD_LIST[*]}" \
    "wrk_threads=${WRK_THREAD_LIST[*]}" "connections=${CONNECTION_LIST[*]}" \
    "duration_s=$DURATION_S" "sleep_ms=$SLEEP_MS" "wrk_timeout_s=$WRK_TIMEOUT_S" "warmup_s=$WARMUP_S" \
    "java_opts=$JAVA_OPTS" "app_args=$APP_ARGS" "app_cds=$( ((java_major >= 19)) && echo on || echo off)" \
    "jdk=$JAVA_VERSION ($JAVA_HOME)" \
    "jetty=$(pom_version jetty.version)" "tomcat=$(pom_version tomcat.version)" \
    "spring=$(pom_version spring.version)" \
    "wrk=$(wrk -v 2>&1 | head -n 1 | sed 's/ Copyright.*//')" \
    "cpu=$(nproc) x ${cpu_model:-unknown}" "os=${os_name:-$(uname -s)}, kernel $(uname -r)" \
    "nofile=$NOFILE" "somaxconn=$(cat /proc/sys/net/core/somaxconn 2>/dev/null || echo '?')" \
    "git=$(git rev-parse --short HEAD 2>/dev/null || echo none)$(git status --porcelain 2>/dev/null | grep -q . && echo ' (uncommitted changes)')"

meta_of() { sed -n "s/^$1=//p" "$META"; }
cat <<EOF
== environment
  date:      $(meta_of date)
  JDK:       $(meta_of jdk)
  versions:  Jetty $(meta_of jetty), Tomcat $(meta_of tomcat), Spring $(meta_of spring)
  wrk:       $(meta_of wrk)
  CPU, OS:   $(meta_of cpu); $(meta_of os)
  limits:    ulimit -n $NOFILE (hard $hard_nofile), somaxconn $(meta_of somaxconn)
  ports:     remote $REMOTE_PORT, app $APP_PORT, admin $ADMIN_PORT on 127.0.0.1: free
  source:    $(meta_of git)
  results:   $RUN_DIR
EOF

### cleanup: kill exactly what we started, keep every finished cell

REMOTE_PID="" APP_PID=""
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    stop_pid "$APP_PID"
    stop_pid "$REMOTE_PID"
    if [[ -d "$RUN_DIR/cells" ]]; then python3 bench/report.py "$RUN_DIR" >/dev/null || true; fi
    if ((rc != 0)); then echo "stopped (exit $rc); finished cells are in $RUN_DIR/results.md" >&2; fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

### 1. remote-sleep and the calibration cells

START_US=$(now_us)
"$JAVA" "${JAVA_OPT_LIST[@]}" -jar remote-sleep/target/remote-sleep.jar --host 127.0.0.1 \
    --port "$REMOTE_PORT" --delay-ms "$SLEEP_MS" >"$RUN_DIR/logs/remote-sleep.log" 2>&1 &
REMOTE_PID=$!
REMOTE_STATS="http://127.0.0.1:$REMOTE_PORT/stats"
wait_ready "$REMOTE_PID" "$REMOTE_STATS" "$RUN_DIR/logs/remote-sleep.log" "$REMOTE_PORT" \
    || die "remote-sleep: $REASON"
echo "== $(grep -m1 'listening' "$RUN_DIR/logs/remote-sleep.log" || echo "remote-sleep: pid $REMOTE_PID")"

# run_wrk DIR URL THREADS CONNECTIONS [APP_PID STATS_URL]: the measured wrk command, echoed
# first. Records the CPU used around it, and reads the app's /stats the moment wrk ends (its
# inFlight is then what wrk left unanswered).
run_wrk() {
    local dir=$1 url=$2 wt=$3 conns=$4 app_pid=${5:-} stats_url=${6:-}
    local cmd=(wrk -t "$wt" -c "$conns" -d "$DURATION" --timeout "$WRK_TIMEOUT" --latency -s "$LUA" "$url")
    echo "  \$ ${cmd[*]}"
    local box0 box1 app0=0 app1=0 rem0 wrk0 rc=0 stats_rc=0
    box0=$(box_ticks) rem0=$(proc_ticks "$REMOTE_PID")
    [[ -z "$app_pid" ]] || app0=$(proc_ticks "$app_pid")
    children_cpu
    wrk0=$CHILDREN_CPU_MS
    WRK_JSON="$dir/wrk.json" WRK_CONNECTIONS=$conns WRK_TIMEOUT_S=$WRK_TIMEOUT_S \
        "${cmd[@]}" >"$dir/wrk.txt" 2>&1 || rc=$?
    [[ -z "$stats_url" ]] || http "$stats_url" >"$dir/stats.json" 2>/dev/null || stats_rc=$?
    box1=$(box_ticks)
    [[ -z "$app_pid" ]] || app1=$(proc_ticks "$app_pid")
    children_cpu
    local -a b0 b1
    read -ra b0 <<<"$box0"
    read -ra b1 <<<"$box1"
    put "$dir/cell.txt" "wrk_command=${cmd[*]}" "wrk_exit=$rc" \
        "cpu_box_pct=$(awk -v b=$((b1[0] - b0[0])) -v t=$((b1[1] - b0[1])) 'BEGIN { printf "%.1f", t ? 100 * b / t : 0 }')" \
        "cpu_remote_s=$(awk -v d=$(($(proc_ticks "$REMOTE_PID") - rem0)) -v h="$CLK_TCK" 'BEGIN { printf "%.2f", d / h }')" \
        "cpu_wrk_s=$(awk -v d=$((CHILDREN_CPU_MS - wrk0)) 'BEGIN { printf "%.2f", d / 1000 }')"
    [[ -z "$app_pid" ]] || put "$dir/cell.txt" "cpu_app_s=$(awk -v d=$((app1 - app0)) -v h="$CLK_TCK" 'BEGIN { printf "%.2f", d / h }')"
    [[ -s "$dir/wrk.json" ]] || { REASON="wrk gave no result (exit $rc, see wrk.txt)"; return 1; }
    ((stats_rc == 0)) || { REASON="GET /stats failed after wrk"; return 1; }
}

# A short unrecorded wrk run of fast calls (?ms=0): loads classes, JIT-compiles the request path
# and opens connections, and leaves nothing queued behind it (1 s calls would leave C requests).
# A thread-per-request app gets at most one connection per pool thread, so no queue forms at all.
warm_up() {
    local url=$1 wt=$2 conns=$3 out=$4 pool=${5:-}
    ((WARMUP_S > 0)) || return 0
    if [[ -n "$pool" ]] && ((pool < conns)); then
        conns=$pool
        ((wt <= conns)) || wt=$conns
    fi
    wrk -t "$wt" -c "$conns" -d "$WARMUP" "$url" >"$out" 2>&1 || true
}

declare -A CEILING_DONE=()
for conns in "${CONNECTION_LIST[@]}"; do
    for wt in "${WRK_THREAD_LIST[@]}"; do
        [[ -z "${CEILING_DONE[$wt-$conns]:-}" ]] || continue
        CEILING_DONE[$wt-$conns]=1
        dir="$RUN_DIR/calibration/w$wt-c$conns"
        mkdir -p "$dir"
        put "$dir/cell.txt" "kind=calibration" "wrk_threads=$wt" "connections=$conns" \
            "duration_s=$DURATION_S" "sleep_ms=$SLEEP_MS"
        echo "== calibration: wrk -t$wt -c$conns straight at remote-sleep /sleep"
        warm_up "http://127.0.0.1:$REMOTE_PORT/sleep?ms=0" "$wt" "$conns" "$dir/warmup.txt"
        wait_drained "$REMOTE_STATS" $((SLEEP_MS / 1000 + 5)) || true
        if run_wrk "$dir" "http://127.0.0.1:$REMOTE_PORT/sleep" "$wt" "$conns"; then
            put "$dir/cell.txt" "status=ok"
        else
            put "$dir/cell.txt" "status=FAILED: $REASON"
        fi
        echo "   ceiling: $(python3 bench/report.py "$RUN_DIR" --summary "$dir")"
    done
done

### 2. the cells

APP_KEY="" APP_LOG="" APP_LAST_CONNS=0 APP_STARTS=0 APP_CDS_FILE=""
ADMIN="http://127.0.0.1:$ADMIN_PORT"

# An app is disposable once its cell is measured, and a graceful stop costs up to ~1 s (more
# with requests queued): KILL it, unless the JVM has yet to write its class-data archive, which
# it does on a normal exit (TERM), once per app.
stop_app() {
    if [[ -z "$APP_CDS_FILE" || -s "$APP_CDS_FILE" ]]; then
        stop_pid "$APP_PID" KILL
    else
        stop_pid "$APP_PID" TERM
    fi
    APP_PID="" APP_KEY=""
}

# Reuse the running app for this cell? Only the same app, container and pool, and only once
# nothing is in flight (lab-notes trap 6). A thread-per-request app that had more connections
# than threads still has the excess queued in its container (a 1-thread app: ~C requests x
# sleep), so restarting it is faster than draining it; anything else drains within one sleep.
can_reuse() {
    local key=$1 app=$2 threads=$3
    [[ -n "$APP_PID" && "$APP_KEY" == "$key" ]] || return 1
    kill -0 "$APP_PID" 2>/dev/null || return 1
    if [[ " $SYNC_APPS " == *" $app "* ]] && ((APP_LAST_CONNS > threads)); then return 1; fi
    wait_drained "$ADMIN/stats" $((SLEEP_MS / 1000 + 2))
}

# Start the app for a cell and wait until it answers; on failure REASON says why.
start_app() {
    local app=$1 container=$2 threads=$3 module=${MODULE_OF[$1]}
    APP_STARTS=$((APP_STARTS + 1))
    APP_LOG="$RUN_DIR/logs/$(printf '%02d' "$APP_STARTS")-$app-$container-t$threads.log"
    # JDK 19+: a class-data archive per app, written when its first JVM exits and mapped by the
    # next ones, starts the app ~0.6 s faster (28 starts in the default matrix). It changes
    # class loading only; the JVM rebuilds it by itself when the jar changes.
    local cds=()
    APP_CDS_FILE=""
    if ((java_major >= 19)); then
        APP_CDS_FILE="$module/target/$app-jdk$java_major.jsa"
        cds=(-XX:+AutoCreateSharedArchive "-XX:SharedArchiveFile=$APP_CDS_FILE")
    fi
    "$JAVA" "${cds[@]}" "${JAVA_OPT_LIST[@]}" -jar "$module/target/$module.jar" --app "$app" --container "$container" \
        --threads "$threads" --host 127.0.0.1 --port "$APP_PORT" --admin-port "$ADMIN_PORT" \
        --remote "http://127.0.0.1:$REMOTE_PORT" "${APP_ARG_LIST[@]}" >"$APP_LOG" 2>&1 &
    APP_PID=$!
    APP_KEY="$app $container $threads"
    wait_ready "$APP_PID" "$ADMIN/stats" "$APP_LOG" "$APP_PORT" "$ADMIN_PORT"
}

# One /call must answer 200 with the remote's body ("slept N ms"); on failure REASON says why.
# ?ms=0 proves the path app -> remote-sleep -> app without waiting a whole sleep.
verify_app() {
    local out=$1 code
    if ! code=$(curl -sS --max-time 10 -o "$out" -w '%{http_code}' "http://127.0.0.1:$APP_PORT/call?ms=0" 2>&1); then
        REASON="verify: GET /call failed: $code"
        return 1
    fi
    local body
    body=$(head -c 200 "$out" | tr '\n' ' ')
    [[ "$code" == 200 ]] || { REASON="verify: GET /call answered HTTP $code: $body"; return 1; }
    [[ "$body" == *slept* ]] || { REASON="verify: GET /call answered '$body', not the remote's 'slept N ms'"; return 1; }
}

cells=()
for container in "${CONTAINER_LIST[@]}"; do
    for app in "${APP_LIST[@]}"; do
        for threads in "${THREAD_LIST[@]}"; do
            for conns in "${CONNECTION_LIST[@]}"; do
                for wt in "${WRK_THREAD_LIST[@]}"; do
                    cells+=("$app $container $threads $wt $conns")
                done
            done
        done
    done
done

TOTAL=${#cells[@]} FAILED=0 i=0
put "$META" "cells_planned=$TOTAL"
CELLS_START_US=$(now_us)
echo "== $TOTAL cells, ${DURATION_S}s each"
for cell in "${cells[@]}"; do
    read -r app container threads wt conns <<<"$cell"
    i=$((i + 1))
    cell_start=$(now_us)
    dir="$RUN_DIR/cells/$(printf '%02d' "$i")-$app-$container-t$threads-w$wt-c$conns"
    mkdir -p "$dir"
    sync=0
    [[ " $SYNC_APPS " != *" $app "* ]] || sync=1
    put "$dir/cell.txt" "kind=cell" "index=$i" "app=$app" "container=$container" "threads=$threads" \
        "wrk_threads=$wt" "connections=$conns" "duration_s=$DURATION_S" "sleep_ms=$SLEEP_MS" \
        "thread_per_request=$sync"
    status=ok fresh=0
    if can_reuse "$app $container $threads" "$app" "$threads"; then
        put "$dir/cell.txt" "app_start=reused"
    else
        stop_app
        put "$dir/cell.txt" "stop_s=$(awk -v d=$(($(now_us) - cell_start)) 'BEGIN { printf "%.2f", d / 1e6 }')"
        fresh=1
        put "$dir/cell.txt" "app_start=fresh"
        start_app "$app" "$container" "$threads" || status="FAILED: $REASON"
        put "$dir/cell.txt" "start_s=$(awk -v d=$(($(now_us) - cell_start)) 'BEGIN { printf "%.2f", d / 1e6 }')"
    fi
    put "$dir/cell.txt" "app_log=${APP_LOG#"$RUN_DIR"/}" "lab_line=$(grep -m1 '^lab: ' "$APP_LOG" || true)"
    if [[ "$status" == ok ]]; then verify_app "$dir/verify.txt" || status="FAILED: $REASON"; fi
    if [[ "$status" == ok ]] && ((fresh)); then
        pool=""
        ((sync == 0)) || pool=$threads
        warm_up "http://127.0.0.1:$APP_PORT/call?ms=0" "$wt" "$conns" "$dir/warmup.txt" "$pool"
        wait_drained "$ADMIN/stats" $((SLEEP_MS / 1000 + 5)) || status="FAILED: still busy after the warm-up"
    fi
    if [[ "$status" == ok ]]; then
        http -X POST "$ADMIN/stats/reset" >/dev/null || status="FAILED: POST /stats/reset failed"
    fi
    if [[ "$status" == ok ]]; then
        put "$dir/cell.txt" "prep_s=$(awk -v d=$(($(now_us) - cell_start)) 'BEGIN { printf "%.2f", d / 1e6 }')"
        run_wrk "$dir" "http://127.0.0.1:$APP_PORT/call" "$wt" "$conns" "$APP_PID" "$ADMIN/stats" \
            || status="FAILED: $REASON"
        APP_LAST_CONNS=$conns
    fi
    if [[ "$status" != ok ]]; then
        FAILED=$((FAILED + 1))
        stop_app                          # a broken app is never reused
    fi
    put "$dir/cell.txt" "status=$status" \
        "cell_wall_s=$(awk -v d=$(($(now_us) - cell_start)) 'BEGIN { printf "%.2f", d / 1e6 }')"
    summary=$(python3 bench/report.py "$RUN_DIR" --summary "$dir")
    elapsed=$((($(now_us) - CELLS_START_US) / 1000000))
    eta=$((elapsed * (TOTAL - i) / i))
    printf '[%d/%d] %s %s threads=%s wrk-t=%s c=%s … %s  (elapsed %s, ETA %s)\n' "$i" "$TOTAL" \
        "$app" "$container" "$threads" "$wt" "$conns" "$summary" "$(human_time "$elapsed")" "$(human_time "$eta")"
done
stop_app

### 3. the end: where the results are, and what the harness cost

wall_s=$((($(now_us) - START_US) / 1000000))
measured_s=$((TOTAL * DURATION_S))
calib_s=$((${#CEILING_DONE[@]} * DURATION_S))
put "$META" "wall_s=$wall_s" "measured_s=$measured_s" "calibration_s=$calib_s"
python3 bench/report.py "$RUN_DIR" >/dev/null
echo "== done: $TOTAL cells ($FAILED FAILED) in $(human_time "$wall_s"): $(human_time "$measured_s") measured in cells" \
    "+ $(human_time "$calib_s") calibration = $(awk -v w="$wall_s" -v m="$measured_s" 'BEGIN { printf "%.2f", m ? w / m : 0 }')x the measured time"
echo "   results: $RUN_DIR/results.md (also results.json, results.csv, cells/*/wrk.txt, logs/)"
((FAILED == 0)) || exit 1
