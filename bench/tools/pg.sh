#!/usr/bin/env bash
#
# pg.sh - a throwaway PostgreSQL cluster for one run or one test: its data directory and its
# socket in DIR, listening on 127.0.0.1:PORT only (or, on a db host of HOSTS=, its address, open to
# the addresses named), fsync off (nothing in it outlives the run), max_connections sized by the
# caller. The bench and the Java tests both start theirs here, so there is one way to get a
# database. (Issue 16: PostgreSQL as the slow backend; issue 28: on a host of its own.)
#
# PostgreSQL refuses to run as root: as root the cluster runs as the `postgres` user (Debian's
# package creates it), and DIR is handed to that user; otherwise as the caller.
#
# USAGE: bench/tools/pg.sh start DIR PORT [MAX_CONNECTIONS [ADDRESS [CLIENT_ADDRESS]...]]
#                                         initdb (once) and start; prints the URL
#        bench/tools/pg.sh serve DIR PORT MAX_CONNECTIONS ADDRESS [CLIENT_ADDRESS]...
#                                         start, print the URL and the postmaster's pid, and wait: on
#                                         TERM, INT or HUP stop it and delete DIR (a role on a host)
#        bench/tools/pg.sh stop DIR       stop it (immediate: throwaway data)
#        bench/tools/pg.sh bindir         where PostgreSQL's programs are
#   eg,  bench/tools/pg.sh start /tmp/pg 55432 200  ->  postgresql://lab@127.0.0.1:55432/lab
# ADDRESS: where it listens (default 127.0.0.1); each CLIENT_ADDRESS may connect from there (trust,
# as lab, to lab: a throwaway cluster with nothing in it but lab_rows).
set -euo pipefail

usage() { echo "Usage: bench/tools/pg.sh start DIR PORT [MAX_CONNECTIONS [ADDRESS [CLIENT_ADDRESS]...]] | serve DIR PORT MAX_CONNECTIONS ADDRESS [CLIENT_ADDRESS]... | stop DIR | bindir" >&2; exit 2; }
die() { echo "ERROR: $*" >&2; exit 1; }

bindir() {
    local dir
    if command -v pg_config >/dev/null && dir=$(pg_config --bindir) && [[ -x "$dir/initdb" ]]; then
        echo "$dir"; return
    fi
    # Debian keeps the server programs out of PATH, one directory per major version: the newest.
    # shellcheck disable=SC2012  # version-sorted names, no odd characters
    dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
    [[ -n "$dir" && -x "$dir/initdb" ]] \
        || die "no PostgreSQL server programs (initdb, pg_ctl, pgbench) found; Debian: apt-get install -y postgresql (then rerun)"
    echo "$dir"
}

# Run a PostgreSQL program as the cluster's owner (postgres when we are root).
as_owner() {
    if [[ $(id -u) -eq 0 ]]; then
        id postgres >/dev/null 2>&1 || die "running as root, and there is no 'postgres' user to run PostgreSQL as (it refuses root); Debian: apt-get install -y postgresql creates it"
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

# Where the cluster lives: DIR, or (as root, when a parent of DIR is closed to the postgres user, as
# a checkout under /root or a mktemp -d is) a directory of its own under /tmp, named in DIR/home,
# with DIR/data a link to its data for the caller (which runs as root) to read postmaster.pid.
home_of() {
    local dir=$1 home
    if [[ $(id -u) -ne 0 ]] || as_owner test -w "$dir"; then echo "$dir"; return; fi
    home=$(cat "$dir/home" 2>/dev/null || true)
    if [[ -z $home || ! -d $home ]]; then
        home=$(mktemp -d /tmp/lab-pg.XXXXXX)
        echo "$home" >"$dir/home"
    fi
    chown postgres: "$home"
    ln -sfn "$home/data" "$dir/data"
    echo "$home"
}

start() {
    local dir=$1 port=$2 max=${3:-100} listen=${4:-127.0.0.1} bin client
    shift $(( $# < 4 ? $# : 4 ))
    [[ "$port" =~ ^[0-9]+$ && "$port" -ge 1024 && "$port" -le 65535 ]] || { echo "ERROR: PORT '$port' is not 1024-65535" >&2; usage; }
    [[ "$max" =~ ^[0-9]+$ && "$max" -ge 10 && "$max" -le 10000 ]] || { echo "ERROR: MAX_CONNECTIONS '$max' is not 10-10000" >&2; usage; }
    for client in "$listen" "$@"; do
        [[ "$client" =~ ^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "ERROR: '$client' is not an IPv4 address" >&2; usage; }
    done
    bin=$(bindir)
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    [[ $(id -u) -eq 0 ]] && chown postgres: "$dir"
    dir=$(home_of "$dir")
    if [[ ! -f "$dir/data/PG_VERSION" ]]; then
        as_owner "$bin/initdb" -D "$dir/data" -U lab --auth=trust --encoding=UTF8 --no-sync >"$dir/initdb.log" 2>&1 \
            || die "initdb failed, see $dir/initdb.log"
    fi
    if as_owner "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
        echo "postgresql://lab@$listen:$port/lab"; return     # already started by an earlier call
    fi
    # The hosts that may connect from elsewhere (the app's and pgbench's, HOSTS=): lab only, to lab.
    for client in "$@"; do
        line="host lab lab $client/32 trust"
        grep -qxF "$line" "$dir/data/pg_hba.conf" || echo "$line" | as_owner tee -a "$dir/data/pg_hba.conf" >/dev/null
    done
    # One address and a socket in DIR only; fsync and friends off: throwaway data, and a disk flush
    # must not be what a cell measures. max_connections: the caller's pools plus pgbench's.
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 60 start -o \
        "-c listen_addresses=$listen -p $port -c unix_socket_directories=$dir -c max_connections=$max \
         -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c shared_buffers=128MB" >/dev/null \
        || die "PostgreSQL did not start on $listen:$port, see $dir/postgres.log"
    # The rest through the socket in DIR: it works whatever the listen address.
    as_owner "$bin/psql" -h "$dir" -p "$port" -U lab -d postgres -qAt \
        -c "SELECT 1 FROM pg_database WHERE datname = 'lab'" | grep -q 1 \
        || as_owner "$bin/createdb" -h "$dir" -p "$port" -U lab lab
    # DB_QUERY=rows reads 10 rows of this table (the write-up's workload); made once per cluster.
    as_owner "$bin/psql" -h "$dir" -p "$port" -U lab -d lab -qAt -v ON_ERROR_STOP=1 -c \
        "CREATE TABLE IF NOT EXISTS lab_rows (id int PRIMARY KEY, name text NOT NULL, amount int NOT NULL);
         INSERT INTO lab_rows SELECT i, 'row ' || i, i * 7 % 1000 FROM generate_series(1, 1000) i ON CONFLICT DO NOTHING;" >/dev/null \
        || die "could not create the table lab_rows on $listen:$port, see $dir/postgres.log"
    echo "postgresql://lab@$listen:$port/lab"
}

# serve: the cluster as a role that lives as long as this process (bench/tools/host-run.sh on a db host).
# pg_ctl puts the postmaster in a session of its own, so a signal to this process's group would
# never reach it: the trap stops it. A bench that dies ends its ssh session, host-run.sh then sends
# TERM, and nothing of the cluster outlives the run.
serve() {
    local dir=$1 home
    mkdir -p "$dir"
    trap 'stop "$dir"; rm -rf "$dir"; echo "pg.sh: stopped"' EXIT     # also when start fails half-way
    trap 'exit 0' TERM INT HUP
    start "$@"
    home=$(cat "$dir/home" 2>/dev/null || echo "$dir")
    echo "pg.sh: postmaster pid $(head -1 "$home/data/postmaster.pid")"
    while :; do sleep 1 & wait $!; done
}

stop() {
    local dir=$1 home=$1 bin pid
    [[ -f "$dir/home" ]] && home=$(cat "$dir/home")
    if [[ -f "$home/data/postmaster.pid" ]]; then
        bin=$(bindir)
        pid=$(head -1 "$home/data/postmaster.pid")
        as_owner "$bin/pg_ctl" -D "$home/data" -m immediate -w -t 30 stop >/dev/null
        # pg_ctl returns once postmaster.pid is gone, a moment before the postmaster (which reaps its
        # backends first) is: wait for it, so that nothing of the cluster outlives this call.
        for _ in $(seq 1 100); do [[ -e /proc/$pid ]] || break; sleep 0.1; done
    fi
    if [[ $home != "$dir" && -d $home ]]; then     # the cluster lived under /tmp: keep its log, drop the rest
        cp "$home"/*.log "$dir/" 2>/dev/null || true
        rm -rf "$home" "$dir/data"
    fi
}

case "${1:-}" in
    start) [[ $# -ge 3 ]] || usage; shift; start "$@" ;;
    serve) [[ $# -ge 5 ]] || usage; shift; serve "$@" ;;
    stop) [[ $# -eq 2 ]] || usage; stop "$2" ;;
    bindir) bindir ;;
    *) usage ;;
esac
