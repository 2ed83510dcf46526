#!/usr/bin/env bash
#
# flake-hunt.sh - run CI's own command from clean clones, many times, quiet or beside a CPU hog,
# and list every test that ever failed (issue 25: find flaky tests before CI does).
#
# Each run: `git clone` of HEAD into a fresh directory, then `bash .ci/run` there (exactly what CI
# runs), optionally with `stress-ng --cpu 1` taking one of the two cores for the whole run. Prints
# one line per run (wall time, exit code, the smoke test's "N passed, M failed") and at the end
# every failed test: Surefire's reports (<testcase> with a <failure> or <error>, and its first
# message line) and the smoke test's "FAIL -" lines. Logs and reports stay in the output folder.
# Stops at the first failed run with --stop (for "N green in a row"); otherwise runs them all.
#
# USAGE: bench/tests/flake-hunt.sh [-n RUNS] [--hog] [--stop] [--jdk JAVA_HOME] [--out DIR]
#   eg,  bench/tests/flake-hunt.sh -n 6 --stop                 6 quiet runs on the default JDK
#        bench/tests/flake-hunt.sh -n 2 --jdk /usr/lib/jvm/java-17-openjdk-amd64
#        bench/tests/flake-hunt.sh -n 3 --hog --stop           one core taken by stress-ng all along
# Needs: git, and stress-ng for --hog (installed with apt-get when missing and run as root).
# Heavy: a run is a whole `make test` (~7-9 min on 2 cores); run nothing else beside it.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
RUNS=1 HOG=0 STOP=0 JDK="" OUT=""

usage() {
    sed -n 's/^# \{0,1\}//; /^USAGE:/,/^Needs:/p' "${BASH_SOURCE[0]}" | sed '$d'
}
die() {
    echo "ERROR: $*" >&2
    usage >&2
    exit 2
}

while (($#)); do
    case $1 in
        -n) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || die "-n needs a positive number of runs"; RUNS=$2; shift ;;
        --hog) HOG=1 ;;
        --stop) STOP=1 ;;
        --jdk) [[ -x ${2:-}/bin/java ]] || die "--jdk needs a JDK home (no ${2:-}/bin/java)"; JDK=$2; shift ;;
        --out) [[ -n ${2:-} ]] || die "--out needs a directory"; OUT=$2; shift ;;
        -h|--help) usage; exit 0 ;;
        *) die "unknown argument '$1'" ;;
    esac
    shift
done

if ((HOG)) && ! command -v stress-ng >/dev/null; then
    if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
        echo "installing stress-ng with apt-get (once)"
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq stress-ng >/dev/null; } \
            || { echo "ERROR: apt-get install -y stress-ng failed" >&2; exit 1; }
    else
        echo "ERROR: --hog needs stress-ng: sudo apt-get install -y stress-ng" >&2
        exit 1
    fi
fi

OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/flake-hunt.XXXXXX")}
mkdir -p "$OUT"
HOG_PID=""
trap '[[ -n $HOG_PID ]] && kill "$HOG_PID" 2>/dev/null; exit 130' INT TERM
echo "flake hunt: $RUNS run(s) of .ci/run from clean clones of $(git -C "$ROOT" rev-parse --short HEAD)," \
    "$( ((HOG)) && echo "beside stress-ng --cpu 1" || echo quiet), JDK ${JDK:-default (bench/tools/java-home.sh)}; logs in $OUT"

failed_runs=0
for ((i = 1; i <= RUNS; i++)); do
    clone="$OUT/clone-$i"
    rm -rf "$clone"
    git clone -q "$ROOT" "$clone"
    if ((HOG)); then
        stress-ng --cpu 1 --timeout 3600s >/dev/null 2>&1 &
        HOG_PID=$!
    fi
    start=$SECONDS rc=0
    (cd "$clone" && if [[ -n $JDK ]]; then export JAVA_HOME=$JDK; fi && CI=true bash .ci/run </dev/null) >"$OUT/run-$i.log" 2>&1 || rc=$?
    took=$((SECONDS - start))
    if [[ -n $HOG_PID ]]; then
        kill "$HOG_PID" 2>/dev/null || true
        wait "$HOG_PID" 2>/dev/null || true
        HOG_PID=""
    fi
    smoke=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$OUT/run-$i.log" | tail -n 1 || true)
    printf 'run %d: exit %d in %dm%02ds; smoke: %s\n' "$i" "$rc" $((took / 60)) $((took % 60)) "${smoke:-none}"
    mkdir -p "$OUT/reports-$i"
    for dir in "$clone"/*/target/surefire-reports; do
        [[ -d $dir ]] && cp -r "$dir" "$OUT/reports-$i/$(basename "$(dirname "$(dirname "$dir")")")"
    done
    rm -rf "$clone"
    if ((rc != 0)); then
        failed_runs=$((failed_runs + 1))
        ((STOP)) && break
    fi
done

echo "failed tests (run: test: first line of the failure):"
python3 - "$OUT" <<'EOF'
import glob, os, re, sys
import xml.etree.ElementTree as ET
out = sys.argv[1]
found = 0
for report in sorted(glob.glob(f"{out}/reports-*/*/TEST-*.xml")):
    run = report.split("/reports-")[1].split("/")[0]
    for case in ET.parse(report).getroot().iter("testcase"):
        for bad in list(case.iter("failure")) + list(case.iter("error")):
            first = (bad.get("message") or bad.text or "").strip().splitlines()[:1]
            print(f"  run {run}: {case.get('classname')}.{case.get('name')}: {first[0][:300] if first else bad.get('type')}")
            found += 1
for log in sorted(glob.glob(f"{out}/run-*.log")):
    run = re.search(r"run-(\d+)\.log", log).group(1)
    for line in open(log, errors="replace"):
        if line.startswith("FAIL - "):
            print(f"  run {run}: smoke: {line.strip()}")
            found += 1
print(f"  {found} in all" if found else "  none")
EOF
exit $((failed_runs > 0))
