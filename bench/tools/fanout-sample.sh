#!/usr/bin/env bash
#
# fanout-sample.sh - one request, many remote calls: the latency of GET /fanout?n=N&ms=M for every
# fan-out model, as a Markdown table (the write-ups' figures: 10 x 1 s, 100 x 300 ms, 1,000 x 300 ms).
#
# Starts remote-sleep, then each variant in turn (fanout-app, fanout-kotlin) on free loopback
# ports with 1 container thread, sends ONE request per row (after a 1-call warm-up) and prints
# the app's own wall time, curl's total time and the JVM's peak thread count. Rows run one at a
# time: a single request measures the model, not the 2-core box. Takes ~3 minutes.
# Kills only the processes it started; every wait is bounded.
#
# USAGE: bench/tools/fanout-sample.sh [--quick]
#   eg,  bench/tools/fanout-sample.sh > docs/samples/fanout-sample.md
#        CONTAINER=jetty bench/tools/fanout-sample.sh --quick      (only the 10 x 1 s rows, ~1 min)
#        ONLY=common-pool bench/tools/fanout-sample.sh              (only the rows whose app id matches)
# Needs: the jars (make build), curl. JAVA_HOME picks the JDK (default: bench/tools/java-home.sh).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"

### default variables
CONTAINER=${CONTAINER:-tomcat}        # jetty | tomcat
START_TIMEOUT=${START_TIMEOUT:-60}    # seconds for a JVM to print its start line
CLIENT_TIMEOUT_MS=60000               # per call; the container's async timeout is this + 5 s,
                                      # so a 30 s fan-out is not cut off by it
ONLY=${ONLY:-}                        # a regex: only the rows whose app id matches
QUICK=0

die() { echo "ERROR: $*" >&2; echo "Usage: bench/tools/fanout-sample.sh [--quick]   (env: CONTAINER, ONLY, START_TIMEOUT, JAVA_HOME)" >&2; exit 2; }

### process options
for arg in "$@"; do
    case $arg in
        --quick) QUICK=1 ;;
        -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown option $arg" ;;
    esac
done
[[ $CONTAINER == jetty || $CONTAINER == tomcat ]] || die "CONTAINER must be jetty or tomcat, got '$CONTAINER'"
[[ $START_TIMEOUT =~ ^[0-9]+$ ]] || die "START_TIMEOUT must be a number of seconds"
command -v curl >/dev/null || die "curl is missing (apt-get install -y curl)"
JDK_HOME=$(bench/tools/java-home.sh)
JAVA="$JDK_HOME/bin/java"
JDK_MAJOR=$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$JDK_HOME/release" 2>/dev/null || true)
for jar in remote-sleep fanout-app fanout-kotlin; do
    [[ -f $jar/target/$jar.jar ]] || die "$jar/target/$jar.jar is missing: run make build"
done

### the rows: label | module | app | app flags | JVM flags | n | ms | expected
# The write-ups: 10 calls of 1 s (sequential 10 s, 10-thread executor ~1 s, 1 thread 10 s again,
# coroutines on 10 vs 1 threads); Kotlin Flow over 300 ms calls (concurrency 16: 100 calls in
# 2,228 ms, 1,000 in 19,321 ms; concurrency 500: 1,000 in 728 ms); fire-and-forget "921x faster".
ONE_CARRIER="-Djdk.virtualThreadScheduler.parallelism=1 -Djdk.virtualThreadScheduler.maxPoolSize=1"
ROWS=(
    "sequential|fanout-app|fanout-sequential|||10|1000|N x M = 10 s"
    "pool K=10|fanout-app|fanout-pool|--fanout-pool 10||10|1000|ceil(N/K) x M = 1 s"
    "pool K=1|fanout-app|fanout-pool|--fanout-pool 1||10|1000|10 s"
    "common pool (JVM default parallelism)|fanout-app|fanout-common-pool|||10|1000|parallelism 1: 10 s?"
    "virtual threads, 1 carrier|fanout-app|fanout-virtual||$ONE_CARRIER|10|1000|~M = 1 s"
    "sendAsync, no thread|fanout-app|fanout-async|||10|1000|~M = 1 s"
    "WebFlux flatMap C=16|fanout-app|fanout-webflux|--fanout-concurrency 16||10|1000|1 s"
    "coroutines K=10, blocking|fanout-kotlin|fanout-coroutines-blocking|--fanout-pool 10||10|1000|1 s"
    "coroutines K=1, blocking|fanout-kotlin|fanout-coroutines-blocking|--fanout-pool 1||10|1000|10 s"
    "coroutines K=1, suspending|fanout-kotlin|fanout-coroutines-suspending|--fanout-pool 1||10|1000|~M = 1 s"
    "fire-and-forget, K=10|fanout-app|fanout-fire-and-forget|--fanout-pool 10||10|1000|answers at once; work ~1 s"
)
if (( ! QUICK )); then
    ROWS+=(
        "sequential|fanout-app|fanout-sequential|||100|300|30 s"
        "WebFlux flatMap C=16|fanout-app|fanout-webflux|--fanout-concurrency 16||100|300|7 rounds = 2.1 s"
        "WebFlux flatMap C=500|fanout-app|fanout-webflux|--fanout-concurrency 500||100|300|1 round = 0.3 s"
        "Flow flatMapMerge C=16, K=1, suspending|fanout-kotlin|fanout-flow-suspending|--fanout-pool 1 --fanout-concurrency 16||100|300|2.1 s"
        "Flow flatMapMerge C=16, K=1, blocking|fanout-kotlin|fanout-flow-blocking|--fanout-pool 1 --fanout-concurrency 16||100|300|min(C,K)=1: 30 s"
        "Flow flatMapMerge C=500, K=1, suspending|fanout-kotlin|fanout-flow-suspending|--fanout-pool 1 --fanout-concurrency 500||100|300|0.3 s"
        "Flow flatMapMerge C=16, K=1, suspending|fanout-kotlin|fanout-flow-suspending|--fanout-pool 1 --fanout-concurrency 16||1000|300|63 rounds = 18.9 s"
        "Flow flatMapMerge C=500, K=1, suspending|fanout-kotlin|fanout-flow-suspending|--fanout-pool 1 --fanout-concurrency 500||1000|300|2 rounds = 0.6 s"
        "sendAsync, no thread|fanout-app|fanout-async|||1000|300|~M = 0.3 s"
        "common pool (JVM default parallelism)|fanout-app|fanout-common-pool|||1000|300|parallelism 1: 300 s?"
    )
fi

### helpers
TMP=$(mktemp -d "${TMPDIR:-/tmp}/fanout-sample.XXXXXX")
PIDS=()
cleanup() {
    local pid
    for pid in "${PIDS[@]}"; do
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start_jvm LOG PATTERN ARGS...: starts java in the background; waits (bounded) for PATTERN in
# LOG; sets STARTED_PID.
start_jvm() {
    local log=$1 pattern=$2 waited=0
    shift 2
    : >"$log"   # exists before the first grep (the background redirect may come later)
    # shellcheck disable=SC2086  # JVM_FLAGS is a list of flags
    "$JAVA" ${JVM_FLAGS:-} "$@" >"$log" 2>&1 &
    STARTED_PID=$!
    PIDS+=("$STARTED_PID")
    until grep -q "$pattern" "$log"; do
        kill -0 "$STARTED_PID" 2>/dev/null || { cat "$log" >&2; die "java $* exited before it started"; }
        (( waited++ < START_TIMEOUT * 5 )) || die "java $* did not start within ${START_TIMEOUT}s"
        sleep 0.2
    done
}

# stop_jvm PID: stops one JVM this script started and forgets it (a PID is never killed twice).
stop_jvm() {
    local pid kept=()
    kill "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
    for pid in "${PIDS[@]}"; do [[ $pid == "$1" ]] || kept+=("$pid"); done
    PIDS=("${kept[@]}")
}

# fetch URL: the body, then curl's total time on the last line; bounded by --max-time. A failed
# request ends as "curl-exit=N" in the table, not as the end of the script.
fetch() {
    curl -s --max-time 400 -w '\n%{time_total}\n' "$1" || echo "curl-exit=$?"
}

field() { sed -n "s/.*[ :]$1=\([^ ]*\).*/\1/p" | head -n 1; }

### run
JVM_FLAGS=""
start_jvm "$TMP/remote.log" 'listening on' -jar remote-sleep/target/remote-sleep.jar --port 0
REMOTE_PORT=$(sed -n 's/.*listening on http:\/\/127.0.0.1:\([0-9]*\).*/\1/p' "$TMP/remote.log")

echo "## One request, many calls: GET /fanout?n=N&ms=M, one request per row"
echo
echo "$("$JAVA" -version 2>&1 | head -n 1), container=$CONTAINER with 1 thread, $(nproc) CPUs, $(date -u +%Y-%m-%dT%H:%MZ)."
echo "\`app wall\` is the app's own time for the request (\`wall_ms\`), \`curl\` adds the hop; \`peak threads\` is the app JVM's."
echo
echo "| N x M | variant | app | expected | app wall | curl | peak threads |"
echo "|---|---|---|---|---|---|---|"
for row in "${ROWS[@]}"; do
    IFS='|' read -r label module app flags jvm n ms expected <<<"$row"
    [[ -z $ONLY || $app =~ $ONLY ]] || continue
    if [[ $app == fanout-virtual ]] && (( ${JDK_MAJOR:-0} < 21 )); then
        echo "| $n x $ms ms | $label | \`$app\` | $expected | needs JDK 21+ (running ${JDK_MAJOR:-?}) | | |"
        continue
    fi
    JVM_FLAGS=$jvm
    # shellcheck disable=SC2086  # flags is a list of flags
    start_jvm "$TMP/app.log" '^lab: ' -jar "$module/target/$module.jar" --app "$app" --container "$CONTAINER" --threads 1 \
        --port 0 --admin-port 0 --remote "http://127.0.0.1:$REMOTE_PORT" --client-timeout-ms "$CLIENT_TIMEOUT_MS" $flags
    app_pid=$STARTED_PID
    lab_line=$(grep -m1 '^lab: ' "$TMP/app.log")
    port=$(sed -n 's/.* listen=http:\/\/127.0.0.1:\([0-9]*\)\/fanout.*/\1/p' <<<"$lab_line")
    admin=$(sed -n 's/.* admin=http:\/\/127.0.0.1:\([0-9]*\)\/stats.*/\1/p' <<<"$lab_line")
    base="http://127.0.0.1:$port/fanout"
    fetch "$base?n=1&ms=0" >/dev/null   # warm-up, unrecorded
    out=$(fetch "$base?n=$n&ms=$ms")
    wall=$(field wall_ms <<<"$out")
    curl_s=$(tail -n 1 <<<"$out")
    result="$wall ms"
    grep -q " ok=$n failed=0 " <<<"$out" || result="$wall ms ($(head -n 1 <<<"$out" | field ok) ok)"
    if [[ $app == fanout-fire-and-forget ]]; then
        # The work ends later; the app logs when (and the next answer's "previous:" line says it too).
        finished=""
        for _ in $(seq 1 300); do
            finished=$(sed -n "s/^fanout: $app n=$n answered_ms=[0-9-]* finished_ms=\([0-9]*\).*/\1/p" "$TMP/app.log")
            [[ -n $finished ]] && break
            sleep 0.2
        done
        result="answered in $wall ms; its $n calls finished ${finished:-?} ms after the request started"
    fi
    peak=$(curl -s --max-time 5 "http://127.0.0.1:$admin/stats" | sed -n 's/.*"peakThreads":\([0-9]*\).*/\1/p' || true)
    echo "| $n x $ms ms | $label | \`$app\` | $expected | $result | ${curl_s}s | ${peak:-?} |"
    stop_jvm "$app_pid"
done
echo
echo "Start lines (every limit): see each app's \`lab:\` line; remote-sleep: $(head -n 1 "$TMP/remote.log")"
