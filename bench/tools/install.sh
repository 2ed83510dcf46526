#!/usr/bin/env bash
#
# install.sh - build the lab's pinned tools into the project-local .tools/bin (gitignored).
#
# vegeta: the open-loop load generator (constant arrival rate, latency from the *intended* send
# time: no coordinated omission, docs/traps.md #3 and #21). No registry here ships a binary, so it
# is built from the Go module proxy at the version pinned in bench/tools/vegeta/go.mod + go.sum.
# (`go install pkg@version` would also ask the proxy for the module's version list, which it refuses.)
#
# matplotlib: the sweep's charts (bench/tools/charts.py), in a project-local virtual environment
# .tools/venv (gitignored), at the versions pinned in bench/tools/charts-requirements.txt;
# report.py itself stays standard-library only and runs the charts with this venv's python.
#
# postgresql: BACKEND=postgres (issue 16): PostgreSQL's server and client programs (initdb, pg_ctl,
# psql, pgbench) from Debian's `postgresql` package, with apt-get when we are root; the bench starts
# its own throwaway cluster with bench/tools/pg.sh, never the package's service.
#
# ansible: HOSTS= reads its inventory with ansible-inventory, `make hosts` runs ansible-playbook
# (issue 28): ansible-core in a project-local venv .tools/ansible at the versions pinned in
# bench/tools/ansible-requirements.txt.
#
# USAGE: bench/tools/install.sh vegeta       prints the tool's path; builds it once (~1 min)
#        bench/tools/install.sh matplotlib   prints the venv's python; installs once (~30 s)
#        bench/tools/install.sh ansible      prints the venv's bin directory; installs once (~10 s)
#        bench/tools/install.sh postgresql   prints PostgreSQL's bindir; installs it once (apt-get, root)
#        bench/tools/install.sh perf         prints perf's path; installs linux-perf once (apt-get, root)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BIN="$ROOT/.tools/bin"
# One install at a time: the smoke test runs hosts-test.sh beside its own runs, and both ask for
# vegeta; two builds into one file, or two pip installs into one venv, would corrupt it.
mkdir -p "$ROOT/.tools"
exec 9>"$ROOT/.tools/install.lock"
flock 9

# venv_with TOOL VENV REQUIREMENTS PROGRAM PIN: a project-local venv at VENV with bench/tools/REQUIREMENTS
# installed (wheels only), once; the venv keeps a copy of the requirements it was built from, so a
# changed pin rebuilds it, as does a missing VENV/PROGRAM. PIN: the grep of the line to name.
venv_with() {
    local tool=$1 venv=$2 name=$3 program=$4 pin=$5
    local req="$ROOT/bench/tools/$name"
    local fix="Debian: apt-get install -y python3-venv python3-pip; then run: bench/tools/install.sh $tool"
    if ! cmp -s "$req" "$venv/$name" || [[ ! -x "$venv/$program" ]]; then
        echo "installing $(grep -m1 "$pin" "$req") into $venv (once)" >&2
        python3 -m venv --clear "$venv" >&2 \
            || { echo "ERROR: python3 -m venv failed (no venv/ensurepip module?); $fix" >&2; exit 1; }
        "$venv/bin/python" -m pip --version >/dev/null 2>&1 \
            || { echo "ERROR: the venv has no pip; $fix" >&2; exit 1; }
        "$venv/bin/python" -m pip install -q --disable-pip-version-check --only-binary=:all: -r "$req" >&2 \
            || { echo "ERROR: pip install -r bench/tools/$name failed (see above); run: bench/tools/install.sh $tool" >&2; exit 1; }
        cp "$req" "$venv/$name"
    fi
}

case "${1:-}" in
    vegeta)
        dir="$ROOT/bench/tools/vegeta"
        version=$(sed -n 's/^require github.com\/tsenart\/vegeta\/v12 \(v[0-9.]*\)$/\1/p' "$dir/go.mod")
        out="$BIN/vegeta-$version"
        if [[ ! -x "$out" ]]; then
            command -v go >/dev/null || {
                echo "ERROR: vegeta $version is built from source and needs Go 1.22+: install it (Debian: apt-get install -y golang-go), then run: bench/tools/install.sh vegeta" >&2
                exit 1
            }
            echo "building vegeta $version into $BIN (once)" >&2
            mkdir -p "$BIN"
            (cd "$dir" && GOFLAGS=-mod=mod go build -o "$out.tmp" github.com/tsenart/vegeta/v12) \
                || { echo "ERROR: building vegeta failed; run: (cd bench/tools/vegeta && go build github.com/tsenart/vegeta/v12)" >&2; exit 1; }
            mv "$out.tmp" "$out"
        fi
        ln -sfn "vegeta-$version" "$BIN/vegeta"
        echo "$BIN/vegeta"
        ;;
    matplotlib)
        # Wheels only: building numpy or matplotlib from source would take long on 2 cores.
        venv_with matplotlib "$ROOT/.tools/venv" charts-requirements.txt bin/python '^matplotlib=='
        echo "$ROOT/.tools/venv/bin/python"
        ;;
    ansible)
        venv_with ansible "$ROOT/.tools/ansible" ansible-requirements.txt bin/ansible-playbook '^ansible-core=='
        echo "$ROOT/.tools/ansible/bin"
        ;;
    perf)
        # SCENARIO=cost counts the app's work with perf's software counters (task-clock, context switches,
        # the raw_syscalls:sys_enter tracepoint); Debian's linux-perf, as root, where it is missing.
        if ! perf stat -e task-clock true >/dev/null 2>&1; then
            if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
                echo "installing perf (Debian's linux-perf) with apt-get (once)" >&2
                export DEBIAN_FRONTEND=noninteractive
                { apt-get update -qq && apt-get install -y -qq linux-perf >/dev/null; } >&2 \
                    || { echo "ERROR: apt-get install -y linux-perf failed (see above)" >&2; exit 1; }
            else
                echo "ERROR: perf not found or not allowed; install it: sudo apt-get install -y linux-perf" >&2
                exit 1
            fi
        fi
        # the tracepoint needs tracefs; root may mount it where it is not (a container's /sys)
        if ! perf stat -e raw_syscalls:sys_enter true >/dev/null 2>&1 && [[ $(id -u) -eq 0 ]]; then
            mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
        fi
        perf stat -e raw_syscalls:sys_enter true >/dev/null 2>&1 \
            || { echo "ERROR: perf cannot count raw_syscalls:sys_enter here (run as root, or lower kernel.perf_event_paranoid)" >&2; exit 1; }
        command -v perf
        ;;
    postgresql)
        if ! "$ROOT/bench/tools/pg.sh" bindir >/dev/null 2>&1; then
            if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
                echo "installing PostgreSQL with apt-get (once)" >&2
                export DEBIAN_FRONTEND=noninteractive
                { apt-get update -qq && apt-get install -y -qq postgresql >/dev/null; } >&2 \
                    || { echo "ERROR: apt-get install -y postgresql failed (see above)" >&2; exit 1; }
            else
                echo "ERROR: PostgreSQL's programs (initdb, pg_ctl, psql, pgbench) not found; install them: sudo apt-get install -y postgresql" >&2
                exit 1
            fi
        fi
        "$ROOT/bench/tools/pg.sh" bindir
        ;;
    *)
        echo "ERROR: unknown tool '${1:-}'" >&2
        echo "Usage: bench/tools/install.sh vegeta|matplotlib|ansible|postgresql" >&2
        exit 2
        ;;
esac
