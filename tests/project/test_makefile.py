"""What ``make test`` does to the machine, it says before doing it."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def dry_run(*targets: str) -> list[str]:
    done = subprocess.run(
        ["make", "--dry-run", "--no-print-directory", *targets],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.splitlines()


def test_make_test_says_it_may_install_chromium_with_apt_get_before_it_does():
    lines = dry_run("test")

    install = lines.index("bash scripts/ensure-chromium.sh")
    said = " ".join(lines[:install])
    assert "chromium-driver" in said
    assert "apt-get" in said
    assert "CHRONICA_NO_APT=1" in said
    assert any("scripts/ci.py" in line for line in lines[install:])
