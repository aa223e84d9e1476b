#!/usr/bin/env bash
# A PostgreSQL primary and a streaming replica of our own, from the machine's binaries
# (initdb, pg_basebackup -R, pg_ctl): free ports, one directory, nothing of the shared
# server touched. Used by tests/clusters.py and by `make cluster`.
#
#   scripts/pg-cluster.sh start DIR [--sync] [--delay MS]   # writes DIR/env (DIR's parent
#                                                            # must let the user postgres in)
#   scripts/pg-cluster.sh kill-primary DIR                   # kill -9 the primary's postmaster
#   scripts/pg-cluster.sh promote DIR                        # the replica becomes the primary
#   scripts/pg-cluster.sh stop DIR                           # both stopped, DIR removed
#   scripts/pg-cluster.sh try                                # start, print, wait for Enter, stop
#
# PG_BIN: the binaries' directory (default: pg_config --bindir, else the newest
# /usr/lib/postgresql/*/bin). As root, the servers run as the user postgres (initdb
# refuses root). Exit status 3 with a reason on stderr: the binaries are missing.
set -euo pipefail

find_bin() {
    if [ -n "${PG_BIN:-}" ]; then echo "$PG_BIN"; return; fi
    local dir
    for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
        if [ -x "$dir/initdb" ]; then echo "$dir"; return; fi
    done
    if command -v pg_config >/dev/null && [ -x "$(pg_config --bindir)/initdb" ]; then
        pg_config --bindir; return
    fi
    echo ""
}

BIN=$(find_bin)
for tool in initdb pg_ctl pg_basebackup postgres; do
    if [ -z "$BIN" ] || [ ! -x "$BIN/$tool" ]; then
        echo "pg-cluster: no PostgreSQL binaries ($tool) in ${BIN:-/usr/lib/postgresql/*/bin};" \
            "install PostgreSQL's server package or set PG_BIN" >&2
        exit 3
    fi
done

as_owner() {
    if [ "$(id -u)" = 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start() {
    local dir=$1; shift
    local sync=0 delay=0
    while [ $# -gt 0 ]; do
        case $1 in
            --sync) sync=1 ;;
            --delay) delay=$2; shift ;;
            *) echo "pg-cluster: unknown option $1" >&2; exit 2 ;;
        esac
        shift
    done
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres "$dir"
    local primary_port replica_port
    primary_port=$(free_port)
    replica_port=$(free_port)
    while [ "$replica_port" = "$primary_port" ]; do replica_port=$(free_port); done
    as_owner "$BIN/initdb" -D "$dir/primary" -U postgres --auth=trust -E UTF8 \
        --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
        || as_owner "$BIN/initdb" -D "$dir/primary" -U postgres --auth=trust -E UTF8 \
            >"$dir/initdb.log" 2>&1
    as_owner tee -a "$dir/primary/postgresql.conf" >/dev/null <<EOF
listen_addresses = '127.0.0.1'
port = $primary_port
unix_socket_directories = '$dir'
wal_level = replica
max_wal_senders = 5
hot_standby = on
shared_buffers = 32MB
fsync = on
wal_keep_size = 256MB
synchronous_standby_names = '$([ "$sync" = 1 ] && echo '*')'
EOF
    echo "host replication all 127.0.0.1/32 trust" | as_owner tee -a "$dir/primary/pg_hba.conf" >/dev/null
    as_owner "$BIN/pg_ctl" -D "$dir/primary" -l "$dir/primary.log" -w -t 60 start >/dev/null
    as_owner "$BIN/pg_basebackup" -h 127.0.0.1 -p "$primary_port" -U postgres \
        -D "$dir/replica" -R -X stream -c fast >/dev/null
    as_owner tee -a "$dir/replica/postgresql.conf" >/dev/null <<EOF
port = $replica_port
recovery_min_apply_delay = '${delay}ms'
hot_standby_feedback = on
# Once promoted it has no standby of its own: it must not wait for one.
synchronous_standby_names = ''
EOF
    # The replica names itself in primary_conninfo for synchronous_standby_names.
    as_owner sed -i "s/^primary_conninfo = '/primary_conninfo = 'application_name=replica /" \
        "$dir/replica/postgresql.auto.conf"
    as_owner "$BIN/pg_ctl" -D "$dir/replica" -l "$dir/replica.log" -w -t 60 start >/dev/null
    cat >"$dir/env" <<EOF
PRIMARY_PORT=$primary_port
REPLICA_PORT=$replica_port
PG_BIN=$BIN
EOF
    cat "$dir/env"
}

# The postmaster of DIR/NODE, only if it is alive and runs on that directory (a
# killed one leaves its postmaster.pid, and process IDs are reused).
postmaster_of() {
    local data=$1 pid
    [ -f "$data/postmaster.pid" ] || return 1
    pid=$(head -1 "$data/postmaster.pid")
    [ -r "/proc/$pid/cmdline" ] || return 1
    tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "-D $data" || return 1
    echo "$pid"
}

stop() {
    local dir=$1 node
    for node in primary replica; do
        if postmaster_of "$dir/$node" >/dev/null; then
            as_owner "$BIN/pg_ctl" -D "$dir/$node" -m immediate -w -t 30 stop >/dev/null 2>&1 || true
        fi
    done
    rm -rf "$dir"
}

kill_primary() {
    # The postmaster and every process it started (backends, WAL sender), at once.
    local dir=$1 postmaster
    postmaster=$(postmaster_of "$dir/primary") || { echo "pg-cluster: no primary running" >&2; exit 1; }
    # shellcheck disable=SC2046
    kill -9 "$postmaster" $(ps -o pid= --ppid "$postmaster") 2>/dev/null || true
}

restart_primary() {
    # A fast restart of the primary (its clients' connections end), as an operator does.
    local dir=$1
    as_owner "$BIN/pg_ctl" -D "$dir/primary" -l "$dir/primary.log" -m fast -w -t 60 restart >/dev/null
}

promote() {
    local dir=$1
    as_owner "$BIN/pg_ctl" -D "$dir/replica" -w -t 60 promote >/dev/null
}

try() {
    local dir
    dir=$(mktemp -d /tmp/chronica-cluster.XXXXXX)
    chmod 755 "$dir"
    # shellcheck disable=SC2064  # the directory now: $dir is gone when the trap runs
    trap "stop '$dir'" EXIT
    start "$dir" "$@" >/dev/null
    # shellcheck disable=SC1091
    . "$dir/env"
    echo "primary: postgresql://postgres@127.0.0.1:$PRIMARY_PORT/postgres"
    echo "replica: postgresql://postgres@127.0.0.1:$REPLICA_PORT/postgres (streaming, read-only)"
    echo "failover URL (libpq): host=127.0.0.1,127.0.0.1 port=$PRIMARY_PORT,$REPLICA_PORT target_session_attrs=read-write"
    echo "Press Enter to stop both and remove $dir."
    read -r _ || true
}

command=${1:-try}
shift || true
case $command in
    start) start "$@" ;;
    stop) stop "$@" ;;
    kill-primary) kill_primary "$@" ;;
    promote) promote "$@" ;;
    restart-primary) restart_primary "$@" ;;
    try) try "$@" ;;
    *) echo "usage: $0 start DIR [--sync] [--delay MS] | kill-primary DIR | restart-primary DIR | promote DIR | stop DIR | try" >&2; exit 2 ;;
esac
