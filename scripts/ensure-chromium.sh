#!/usr/bin/env bash
# The admin's browser test drives Debian's Chromium. Install it only when it is
# missing, so a machine that has it is left alone. Outside CI a failed install
# only warns (the browser test then skips and prints why); in CI (CI=true) it fails.
set -uo pipefail

if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then
    echo "ensure-chromium: found /usr/bin/chromium and /usr/bin/chromedriver"
    exit 0
fi

fail() {
    echo "ensure-chromium: $1" >&2
    if [ "${CI:-}" = "true" ]; then
        exit 1
    fi
    echo "ensure-chromium: the browser test will skip and say why" >&2
    exit 0
}

[ "${CHRONICA_NO_APT:-}" = "1" ] && fail "chromium is missing and CHRONICA_NO_APT=1 forbids apt-get"
command -v apt-get >/dev/null 2>&1 || fail "apt-get not found, cannot install chromium"
SUDO=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || fail "not root and no sudo, cannot install chromium"
    SUDO=(sudo -n)
fi

echo "ensure-chromium: installing chromium and chromium-driver with apt-get" >&2
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -qq || fail "apt-get update failed"
# fonts-liberation is only a Recommends of chromium; without a font the screenshot is boxes.
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends \
    chromium chromium-driver fonts-liberation >/dev/null \
    || fail "apt-get install chromium chromium-driver failed"
