#!/usr/bin/env bash
#
# bench.sh - run the lab's wrk matrix: apps x containers x pool sizes x wrk settings (x scenarios).
#
# What it does, top to bottom (the code is bench/labbench/main.py; this file is its entry):
#   1. checks every setting, the tools (wrk, a JDK), ports and `ulimit -n`, builds the jars if
#      they are missing or older than the sources, and prints the environment;
#   2. starts remote-sleep (the slow backend) once and runs one calibration cell per wrk setting:
#      the same wrk command straight at remote-sleep. Its req/s is the ceiling this box and this
#      closed-loop window can reach (docs/traps.md #14); every cell is reported as a % of it;
#   3. for each cell: starts the app (or reuses the previous one when it is the same app,
#      container and pool size and has drained), verifies one /call, warms it up unrecorded,
#      resets its /stats, starts the scenario's side load if any (slow clients), runs wrk with a
#      Lua hook that writes JSON, and reads /stats at once;
#   4. rewrites results.json / .md / .csv after every cell, so Ctrl-C keeps finished cells.
#
# USAGE: ./bench.sh [sweep] [--help]
#        Every setting is an environment variable (see --help, or bench/labbench/settings.py);
#        `make bench VAR=value ...` passes them through. eg,
#        THREADS="1 8 200" ./bench.sh          APPS=webflux CONTAINERS="tomcat netty" ./bench.sh
#        ./bench.sh sweep (make sweep): each model from 100 to 10,000 connections instead of the
#        matrix, with the app's CPU, memory and threads per level, each model's knee, and charts.
#
# REQUIREMENTS: Linux, python3 (3.9+, standard library only), a JDK 17+ (bench/tools/java-home.sh picks
#   the newest >= 21), Maven for the build, and wrk (installed with apt-get when missing and run
#   as root).
#
# OVERHEAD: wrk, the app and remote-sleep share this machine's cores (docs/traps.md #7), so each
#   cell records CPU use: the box's % busy and the cores used by the app, remote-sleep and wrk.
#   Per cell the harness adds an app start + warm-up (fresh apps only) and a drain wait.
#   Exit codes: 0 done, 1 a cell FAILED or the machine is not ready, 2 a bad setting,
#   130 Ctrl-C, 143 TERM (the processes it started are stopped, finished cells kept).
#
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$ROOT"
command -v python3 >/dev/null || { echo "ERROR: python3 not found (Debian: apt-get install -y python3)" >&2; exit 1; }
# exec: python becomes this process, so Ctrl-C and TERM reach it (and only it) directly.
PYTHONPATH="$ROOT/bench${PYTHONPATH:+:$PYTHONPATH}" exec python3 -m labbench "$@"
