#!/usr/bin/env bash
#
# pg.sh - a throwaway PostgreSQL cluster for one run or one test: its data directory in DIR, listening
# on 127.0.0.1:PORT only (or, on a db host of HOSTS=, its address, open to the addresses named), fsync
# off (nothing in it outlives the run), max_connections sized by the caller. The bench and the Java
# tests both start theirs here, so there is one way to get a database. (Issue 16: PostgreSQL as the
# slow backend; issue 28: on a host of its own.)
#
# Closed to all but its users (issue 40): the apps, psql and pgbench connect as lab, a role that is
# not a superuser (no COPY ... TO PROGRAM), with the password the caller gives in LAB_DB_PASSWORD (the
# environment, never argv), over TCP from 127.0.0.1 and the CLIENT_ADDRESSes, to the database lab,
# scram-sha-256. pg_hba.conf has no other line: no superuser logs in, over TCP or the socket (in the
# data directory, 0700, unix_socket_permissions=0700). The role, the database and lab_rows are made in
# single-user mode (postgres --single), before the server first listens.
#
# PostgreSQL refuses to run as root: as root the cluster runs as the `postgres` user (Debian's package
# creates it), in DIR where that user can reach it, else in a directory of root's under /tmp named
# from DIR's path (a checkout under /root or a mktemp -d is closed to it): the same name at every call,
# never read back from a file, since `stop` and `clean` delete it as root.
#
# USAGE: bench/tools/pg.sh start DIR PORT [MAX_CONNECTIONS [ADDRESS [CLIENT_ADDRESS]...]]
#                                         prepare (initdb once) and start in the background; prints the URL
#        bench/tools/pg.sh run DIR PORT [MAX_CONNECTIONS [ADDRESS [CLIENT_ADDRESS]...]]
#                                         prepare, print the URL, then become the postmaster in the
#                                         foreground, killed when its parent dies (the bench on one box)
#        bench/tools/pg.sh serve DIR PORT MAX_CONNECTIONS ADDRESS [CLIENT_ADDRESS]...
#                                         start, print the URL and the postmaster's pid, and wait: on
#                                         TERM, INT or HUP stop it and delete DIR (a role on a host)
#        bench/tools/pg.sh stop DIR       stop it (immediate: throwaway data), then clean
#        bench/tools/pg.sh clean DIR      once it has stopped: its logs kept in DIR, its home under /tmp deleted
#        bench/tools/pg.sh bindir         where PostgreSQL's programs are
#   eg,  LAB_DB_PASSWORD=... bench/tools/pg.sh start /tmp/pg 55432 200  ->  postgresql://lab@127.0.0.1:55432/lab
# ADDRESS: where it listens (default 127.0.0.1); each CLIENT_ADDRESS may connect from there (as lab,
# to lab, with the password: a throwaway cluster with nothing in it but lab_rows).
set -euo pipefail

usage() { echo "Usage: bench/tools/pg.sh start|run DIR PORT [MAX_CONNECTIONS [ADDRESS [CLIENT_ADDRESS]...]] | serve DIR PORT MAX_CONNECTIONS ADDRESS [CLIENT_ADDRESS]... | stop DIR | clean DIR | bindir" >&2; exit 2; }
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

# Where the cluster lives: DIR, or (as root, when the postgres user cannot reach DIR's parent) a
# directory of root's under /tmp whose name is made from DIR's path. Made, not read back from a file:
# a file the cluster's owner can write must never name what root deletes.
home_of() {
    local dir=$1
    if [[ $(id -u) -ne 0 ]] || as_owner test -x "$(dirname "$dir")" 2>/dev/null; then
        echo "$dir"
    else
        echo "/tmp/lab-pg-home.$(printf %s "$dir" | sha256sum | cut -c1-16)"
    fi
}

# The home made ready: DIR the owner's, or the /tmp home root's (0711: the owner cannot rename or
# replace what is in it) with a data directory and a log file of the owner's in it.
make_home() {
    local dir=$1 home=$2
    if [[ $(id -u) -ne 0 ]]; then return; fi
    if [[ $home == "$dir" ]]; then chown postgres: "$dir"; return; fi
    if [[ ! -e $home && ! -L $home ]]; then
        mkdir -m 0711 "$home"          # fails if another user made it in the meantime
    elif [[ -L $home || ! -d $home || $(stat -c %u "$home") != 0 ]]; then
        die "$home exists and is not root's: not a home this script made; remove it"
    fi
    [[ -d $home/data ]] || install -d -m 0700 -o postgres -g postgres "$home/data"
    [[ -e $home/postgres.log ]] || install -m 0600 -o postgres -g postgres /dev/null "$home/postgres.log"
}

# pg_hba.conf, all of it: lab with its password, to lab, from 127.0.0.1 and each client; no other line.
write_hba() {
    local data=$1 client
    shift
    {
        echo "# bench/tools/pg.sh (issue 40): lab, with its password, to lab, from these addresses only."
        for client in 127.0.0.1 "$@"; do echo "host lab lab $client/32 scram-sha-256"; done
    } | as_owner tee "$data/pg_hba.conf" >/dev/null
}

# SQL on stdin run in single-user mode (no server listens, no login): ERROR lines fail it. The
# statement of an error is not echoed (log_min_error_statement): it may hold the password.
single_user() {
    local bin=$1 data=$2 db=$3 out rc=0
    out=$(as_owner "$bin/postgres" --single -D "$data" -c log_min_error_statement=panic "$db" 2>&1) || rc=$?
    if [[ $rc -ne 0 ]] || grep -qE '(ERROR|FATAL|PANIC):' <<<"$out"; then
        die "setting up the cluster in $data (exit $rc): $(grep -E '(ERROR|FATAL|PANIC):' <<<"$out" | head -3)"
    fi
}

# initdb (once), the role lab and its database and table (once), lab's password (every time: the
# caller's), pg_hba.conf. Sets home, bin, opts (the postmaster's settings) and url for the caller.
prepare() {
    local dir=$1 port=$2 max=${3:-100} listen=${4:-127.0.0.1} client first=no
    shift $(( $# < 4 ? $# : 4 ))
    [[ "$port" =~ ^[0-9]+$ && "$port" -ge 1024 && "$port" -le 65535 ]] || { echo "ERROR: PORT '$port' is not 1024-65535" >&2; usage; }
    [[ "$max" =~ ^[0-9]+$ && "$max" -ge 10 && "$max" -le 10000 ]] || { echo "ERROR: MAX_CONNECTIONS '$max' is not 10-10000" >&2; usage; }
    for client in "$listen" "$@"; do
        [[ "$client" =~ ^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "ERROR: '$client' is not an IPv4 address" >&2; usage; }
    done
    [[ ${LAB_DB_PASSWORD:-} =~ ^[A-Za-z0-9_-]{16,}$ ]] \
        || die "LAB_DB_PASSWORD must hold lab's password (16 or more of A-Z a-z 0-9 _ -, eg, python3 -c 'import secrets; print(secrets.token_urlsafe())'), in the environment"
    bin=$(bindir)
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    home=$(home_of "$dir")
    make_home "$dir" "$home"
    if [[ ! -f "$home/data/PG_VERSION" ]]; then
        as_owner "$bin/initdb" -D "$home/data" -U lab_owner --auth=reject --encoding=UTF8 --no-sync >"$home/initdb.log" 2>&1 \
            || die "initdb failed, see $home/initdb.log"
        first=yes
    fi
    if [[ $first == yes ]]; then
        printf '%s\n' "CREATE ROLE lab LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION" "CREATE DATABASE lab OWNER lab" \
            | single_user "$bin" "$home/data" postgres
        # DB_QUERY=rows reads 10 rows of this table (the write-up's workload).
        printf '%s\n' "CREATE TABLE lab_rows (id int PRIMARY KEY, name text NOT NULL, amount int NOT NULL)" \
            "INSERT INTO lab_rows SELECT i, 'row ' || i, i * 7 % 1000 FROM generate_series(1, 1000) i" \
            "ALTER TABLE lab_rows OWNER TO lab" | single_user "$bin" "$home/data" lab
    fi
    # printf is bash's own: the password is on no process's command line.
    printf "ALTER ROLE lab PASSWORD '%s'\n" "$LAB_DB_PASSWORD" | single_user "$bin" "$home/data" postgres
    unset LAB_DB_PASSWORD            # the server needs it no more: not in its environment
    write_hba "$home/data" "$@"
    # One address and a private socket only; fsync and friends off: throwaway data, and a disk flush
    # must not be what a cell measures. max_connections: the caller's pools plus pgbench's.
    opts=(-c "listen_addresses=$listen" -p "$port" -c "unix_socket_directories=$home/data" -c unix_socket_permissions=0700
          -c "max_connections=$max" -c password_encryption=scram-sha-256 -c fsync=off -c synchronous_commit=off
          -c full_page_writes=off -c shared_buffers=128MB)
    url="postgresql://lab@$listen:$port/lab"
}

start() {
    local dir=$1 home bin opts url
    bin=$(bindir)
    mkdir -p "$dir"
    home=$(home_of "$(cd "$dir" && pwd)")
    if [[ -f "$home/data/PG_VERSION" ]] && as_owner "$bin/pg_ctl" -D "$home/data" status >/dev/null 2>&1; then
        echo "postgresql://lab@${4:-127.0.0.1}:$2/lab"; return     # already started by an earlier call
    fi
    prepare "$@"
    as_owner "$bin/pg_ctl" -D "$home/data" -l "$home/postgres.log" -w -t 60 start -o "${opts[*]}" >/dev/null \
        || die "PostgreSQL did not start on ${4:-127.0.0.1}:$2, see $home/postgres.log"
    echo "$url"
}

# run: the cluster as a child of the caller, in the foreground (its log on stderr), for as long as
# the caller lives: setpriv sets PR_SET_PDEATHSIG after the user change (which clears it), and the
# postmaster's backends end when it does. pg_ctl would put it in a session of its own, where a
# SIGKILLed bench would leave it running for good.
run() {
    local home bin opts url
    prepare "$@"
    echo "$url"
    if [[ $(id -u) -eq 0 ]]; then
        exec setpriv --reuid=postgres --regid=postgres --init-groups --pdeathsig=KILL -- "$bin/postgres" -D "$home/data" "${opts[@]}"
    fi
    exec setpriv --pdeathsig=KILL -- "$bin/postgres" -D "$home/data" "${opts[@]}"
}

# serve: the cluster as a role that lives as long as this process (bench/tools/host-run.sh on a db host).
# pg_ctl puts the postmaster in a session of its own, so a signal to this process's group would
# never reach it: the trap stops it. A bench that dies ends its ssh session, host-run.sh then sends
# TERM, and nothing of the cluster outlives the run.
serve() {
    local dir=$1 home
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)      # stop and clean make the same home from it
    trap 'stop "$dir"; rm -rf "$dir"; echo "pg.sh: stopped"' EXIT     # also when start fails half-way
    trap 'exit 0' TERM INT HUP
    shift
    start "$dir" "$@"
    home=$(home_of "$dir")
    echo "pg.sh: postmaster pid $(head -1 "$home/data/postmaster.pid")"
    while :; do sleep 1 & wait $!; done
}

stop() {
    local dir=$1 home bin pid
    home=$(home_of "$dir")
    if [[ -f "$home/data/postmaster.pid" ]]; then
        bin=$(bindir)
        pid=$(head -1 "$home/data/postmaster.pid")
        as_owner "$bin/pg_ctl" -D "$home/data" -m immediate -w -t 30 stop >/dev/null
        # pg_ctl returns once postmaster.pid is gone, a moment before the postmaster (which reaps its
        # backends first) is: wait for it, so that nothing of the cluster outlives this call.
        for _ in $(seq 1 100); do [[ -e /proc/$pid ]] || break; sleep 0.1; done
    fi
    clean "$dir"
}

# clean: a home under /tmp (never DIR itself) deleted once its logs are copied to DIR. Its path is
# made from DIR (home_of); rm -rf of a symlink put in its place would delete the link only.
clean() {
    local dir=$1 home
    home=$(home_of "$dir")
    if [[ $home != "$dir" && -d $home && ! -L $home ]]; then
        if [[ -d $dir ]]; then cp "$home"/*.log "$dir/" 2>/dev/null || true; fi
        rm -rf -- "$home"
    fi
}

case "${1:-}" in
    start) [[ $# -ge 3 ]] || usage; shift; start "$@" ;;
    run) [[ $# -ge 3 ]] || usage; shift; run "$@" ;;
    serve) [[ $# -ge 5 ]] || usage; shift; serve "$@" ;;
    stop) [[ $# -eq 2 ]] || usage; stop "$(cd "$2" 2>/dev/null && pwd || echo "$2")" ;;
    clean) [[ $# -eq 2 ]] || usage; clean "$(cd "$2" 2>/dev/null && pwd || echo "$2")" ;;
    bindir) bindir ;;
    *) usage ;;
esac
