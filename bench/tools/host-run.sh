#!/usr/bin/env bash
#
# host-run.sh - one role's command on its host, as the bench starts it over ssh (HOSTS=, issue 28;
# bench/labbench/hostrun.py). Run from the repository on that host.
#
# An ssh session's command lives on when the ssh client dies, so the stop travels in the session's
# stdin instead: the bench keeps it open for as long as the role should run, writes a signal name
# (TERM, KILL) and closes it to stop it; a bench that dies closes it too (its ssh goes, the session
# ends), and then the role gets TERM. A bench cut off by the network closes nothing: with --silence S
# the bench writes a line (".") every few seconds, and S seconds without one count as its end too
# (sshd alone would keep the session until TCP gives up, ~15 min). The command runs in a session (and
# process group) of its own and is signalled as a group; one that outlives its TERM gets KILL (the
# bench writes it, or, when the bench is gone, 10 s later). Lines for the bench, on stderr:
# "host-run: pid N" first, and after the command "host-run: exit N, ..." and bash's `times` (the
# command's CPU on its second line).
#
# --env-stdin: the command's environment arrives as NAME=VALUE lines on stdin, ended by an empty line,
#   before the stop's lines: a secret (a token, a password) never stands in a command line (`ps`).
# --run-dir: the run's private directory on this host (mktemp -d, mode 0700), "host-run: dir PATH" on
#   stderr; deleted when the command ends (default command: wait for the stop), however it ends.
#
# USAGE: bench/tools/host-run.sh [--cpus LIST] [--env-stdin] [--silence S] -- COMMAND [ARG]...
#        bench/tools/host-run.sh --run-dir [--silence S]
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2

cpus="" env_stdin="" silence="" run_dir=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --cpus) cpus=$2; shift 2 ;;
        --env-stdin) env_stdin=1; shift ;;
        --silence) silence=$2; shift 2 ;;
        --run-dir) run_dir=1; shift ;;
        --) shift; break ;;
        *) echo "host-run: unknown option $1" >&2; exit 2 ;;
    esac
done
[[ -z "$silence" || "$silence" =~ ^[1-9][0-9]*$ ]] || { echo "host-run: --silence $silence is not a number of seconds" >&2; exit 2; }
if [[ $# -eq 0 ]]; then
    [[ -n "$run_dir" ]] || { echo "host-run: no command" >&2; exit 2; }
    set -- sleep infinity
fi
patience=()                 # read's timeout: the bench's silence that ends the command
[[ -n "$silence" ]] && patience=(-t "$silence")

envs=()
if [[ -n "$env_stdin" ]]; then
    ended=""
    while IFS= read -r "${patience[@]}" line; do
        [[ -z "$line" ]] && { ended=1; break; }
        [[ "$line" =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || { echo "host-run: not NAME=VALUE on stdin: '${line%%=*}'" >&2; exit 2; }
        envs+=("$line")
    done
    [[ -n "$ended" ]] || { echo "host-run: the environment did not arrive on stdin" >&2; exit 2; }
fi

# Every connection is a file descriptor (docs/traps.md #13): the soft limit up to the hard one.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
pin=()
[[ -n "$cpus" ]] && pin=(taskset -c "$cpus")

dir=""
if [[ -n "$run_dir" ]]; then
    dir=$(mktemp -d "${TMPDIR:-/tmp}/lab-run.XXXXXX") || exit 1
fi

# The environment exported in a subshell that then becomes the command (exec; setsid does not fork
# in a background job): the values are in no process's arguments.
(
    for kv in "${envs[@]}"; do export "${kv?}"; done
    exec setsid "${pin[@]}" "$@"
) </dev/null &
pid=$!
echo "host-run: pid $pid on $(hostname) $(ip -o -4 addr show scope global 2>/dev/null | awk '{print $4}' | head -1)" >&2
[[ -n "$dir" ]] && echo "host-run: dir $dir" >&2

# The stop: signal names on stdin (TERM, then KILL if the command lingers), or its end, or (--silence)
# no line for S seconds: then TERM, and KILL 10 s later if the command is still there (a bench that
# died cannot send it). The watcher has a session of its own, so that one kill ends it and its sleep
# when the command ends first. (A background command's stdin is /dev/null unless it is given one:
# the session's stdin goes in as fd 3.)
exec 3<&0
# shellcheck disable=SC2016  # the script's variables are its own
setsid bash -c '
    pid=$1
    shift
    signal() { kill -"$1" -- -"$pid" 2>/dev/null || kill -"$1" "$pid" 2>/dev/null; }
    while read -r "$@" line; do
        [[ "$line" =~ ^(TERM|KILL|INT)$ ]] && signal "$line"
    done
    signal TERM
    # KILL 10 s later if the command is still there; gone sooner, the watcher ends with it (a plain
    # sleep 10 here outlived a cut-off role by those 10 s)
    for _ in {1..50}; do
        kill -0 "$pid" 2>/dev/null || exit 0
        sleep 0.2
    done
    signal KILL' host-run-watcher "$pid" "${patience[@]}" <&3 >/dev/null 2>&1 &
watcher=$!

wait "$pid"
rc=$?
kill -- -"$watcher" 2>/dev/null
# First: the lines below fail (and end this script) when the bench and its ssh are gone.
[[ -n "$dir" ]] && rm -rf -- "$dir"
# `times`' second line: the children's user and system time (the command's: the watcher is not waited for).
# Not through a pipe or $(...): a subshell would count its own children, none.
echo "host-run: exit $rc, then the shell's and its children's user and system CPU:" >&2
times >&2
exit "$rc"
