#!/usr/bin/env bash
# The pooler tests (tests/stores/test_pgbouncer.py) run part of the PostgreSQL suite
# through Debian's PgBouncer in transaction mode. Install it only when it is missing,
# so a machine that has it is left alone. Outside CI a failed install only warns (the
# pooler tests then skip and print why); in CI (CI=true) it fails.
set -uo pipefail

for found in /usr/sbin/pgbouncer /usr/bin/pgbouncer; do
    if [ -x "$found" ]; then
        echo "ensure-pgbouncer: found $found"
        exit 0
    fi
done

fail() {
    echo "ensure-pgbouncer: $1" >&2
    if [ "${CI:-}" = "true" ]; then
        exit 1
    fi
    echo "ensure-pgbouncer: the pooler tests will skip and say why" >&2
    exit 0
}

[ "${CHRONICA_NO_APT:-}" = "1" ] && fail "pgbouncer is missing and CHRONICA_NO_APT=1 forbids apt-get"
command -v apt-get >/dev/null 2>&1 || fail "apt-get not found, cannot install pgbouncer"
SUDO=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || fail "not root and no sudo, cannot install pgbouncer"
    SUDO=(sudo -n)
fi

echo "ensure-pgbouncer: installing pgbouncer with apt-get" >&2
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -qq || fail "apt-get update failed"
# Only the binary is used: the tests start their own pgbouncer on a free port; the
# package's service is not needed (policy-rc.d may keep it from starting anyway).
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends pgbouncer >/dev/null \
    || fail "apt-get install pgbouncer failed"
