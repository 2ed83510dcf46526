#!/usr/bin/env bash
#
# host-run.sh - one role's command on its host, as the bench starts it over ssh (HOSTS=, issue 28;
# bench/labbench/place.py). Run from the repository on that host.
#
# An ssh session's command lives on when the ssh client dies, so the stop travels in the session's
# stdin instead: the bench keeps it open for as long as the role should run, writes a signal name
# (TERM, KILL) and closes it to stop it; a bench that dies closes it too (its ssh goes, the session
# ends), and then the role gets TERM. The command runs in a session (and process group) of its own
# and is signalled as a group; one that outlives its TERM gets KILL (the bench writes it, or, when the
# bench is gone, 10 s later). Lines for the bench, on stderr: "host-run: pid N" first, and after
# the command "host-run: exit N, ..." and bash's `times` (the command's CPU on its second line).
#
# USAGE: bench/tools/host-run.sh [--cpus LIST] [--env NAME=VALUE]... -- COMMAND [ARG]...
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2

cpus=""
envs=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --cpus) cpus=$2; shift 2 ;;
        --env) envs+=("$2"); shift 2 ;;
        --) shift; break ;;
        *) echo "host-run: unknown option $1" >&2; exit 2 ;;
    esac
done
[[ $# -gt 0 ]] || { echo "host-run: no command" >&2; exit 2; }

# Every connection is a file descriptor (docs/traps.md #13): the soft limit up to the hard one.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
pin=()
[[ -n "$cpus" ]] && pin=(taskset -c "$cpus")

setsid "${pin[@]}" env "${envs[@]}" "$@" </dev/null &
pid=$!
echo "host-run: pid $pid on $(hostname) $(ip -o -4 addr show scope global 2>/dev/null | awk '{print $4}' | head -1)" >&2

# The stop: signal names on stdin (TERM, then KILL if the command lingers), or its end: then TERM, and
# KILL 10 s later if the command is still there (a bench that died cannot send it). The watcher has a
# session of its own, so that one kill ends it and its sleep when the command ends first. (A
# background command's stdin is /dev/null unless it is given one: the session's stdin goes in as fd 3.)
exec 3<&0
# shellcheck disable=SC2016  # the script's variables are its own
setsid bash -c '
    pid=$1
    signal() { kill -"$1" -- -"$pid" 2>/dev/null || kill -"$1" "$pid" 2>/dev/null; }
    while read -r line; do
        [[ "$line" =~ ^(TERM|KILL|INT)$ ]] && signal "$line"
    done
    signal TERM
    sleep 10
    signal KILL' host-run-watcher "$pid" <&3 >/dev/null 2>&1 &
watcher=$!

wait "$pid"
rc=$?
kill -- -"$watcher" 2>/dev/null
# `times`' second line: the children's user and system time (the command's: the watcher is not waited for).
# Not through a pipe or $(...): a subshell would count its own children, none.
echo "host-run: exit $rc, then the shell's and its children's user and system CPU:" >&2
times >&2
exit "$rc"
