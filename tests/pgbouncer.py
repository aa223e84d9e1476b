"""A PgBouncer of the tests' own, in transaction mode, in front of the test server.

``pgbouncer()`` starts Debian's ``pgbouncer`` (``scripts/ensure-pgbouncer.sh``
installs it; ``make test`` runs that) on a free port of 127.0.0.1, with its config,
log and socket in a temporary directory, and stops it when the ``with`` ends. The
``pgbouncer_url`` fixture skips, and says why, where there is no binary. Nothing of
the machine's own PgBouncer (if any) is used or changed.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

BINARIES = ("/usr/sbin/pgbouncer", "/usr/bin/pgbouncer")
DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/postgres"
WHY_MISSING = (
    "pgbouncer is not installed: run scripts/ensure-pgbouncer.sh (make test does;"
    " CHRONICA_NO_APT=1 keeps it from using apt-get)"
)


def binary() -> str | None:
    found = shutil.which("pgbouncer")
    return found or next((b for b in BINARIES if os.access(b, os.X_OK)), None)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def pgbouncer(server_url: str = DEFAULT_URL, *, pool_size: int = 20) -> Iterator[str]:
    """The URL of ``server_url`` through a new PgBouncer in transaction mode."""
    program = binary()
    if program is None:
        raise FileNotFoundError(WHY_MISSING)
    server = urlsplit(server_url)
    user = server.username or "postgres"
    port = _free_port()
    with tempfile.TemporaryDirectory(prefix="chronica-pgbouncer-") as tmp:
        directory = Path(tmp)
        (directory / "users.txt").write_text(f'"{user}" "{server.password or ""}"\n')
        (directory / "pgbouncer.ini").write_text(
            "[databases]\n"
            f"* = host={server.hostname or '127.0.0.1'} port={server.port or 5432}\n"
            "[pgbouncer]\n"
            "listen_addr = 127.0.0.1\n"
            f"listen_port = {port}\n"
            f"unix_socket_dir = {directory}\n"
            "auth_type = trust\n"
            f"auth_file = {directory / 'users.txt'}\n"
            "pool_mode = transaction\n"
            f"default_pool_size = {pool_size}\n"
            "max_client_conn = 2000\n"
            "server_reset_query =\n"
            "ignore_startup_parameters = extra_float_digits,options\n"
            f"logfile = {directory / 'pgbouncer.log'}\n"
            f"pidfile = {directory / 'pgbouncer.pid'}\n"
        )
        command = [program, "-q"]
        if os.geteuid() == 0:  # PgBouncer refuses to run as root
            runner = "postgres" if _user_exists("postgres") else "nobody"
            command += ["-u", runner]
            owner = pwd.getpwnam(runner)
            for path in [directory, *directory.iterdir()]:
                os.chown(path, owner.pw_uid, owner.pw_gid)
        command.append(str(directory / "pgbouncer.ini"))
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            _wait_for(port, process, directory)
            netloc = f"{user}@127.0.0.1:{port}"
            yield urlunsplit((server.scheme, netloc, server.path, server.query, ""))
        finally:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def _wait_for(port: int, process: subprocess.Popen[bytes], directory: Path) -> None:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if process.poll() is not None:
            log = directory / "pgbouncer.log"
            output = (process.stdout.read() if process.stdout else b"").decode(errors="replace")
            raise RuntimeError(
                f"pgbouncer exited ({process.returncode}): {output}"
                f"{log.read_text() if log.exists() else ''}"
            )
        with contextlib.suppress(OSError):
            socket.create_connection(("127.0.0.1", port), 0.5).close()
            return
        time.sleep(0.05)
    raise RuntimeError(f"pgbouncer did not listen on 127.0.0.1:{port} within 15 s")


@pytest.fixture(scope="session")
def pgbouncer_url() -> Iterator[str]:
    """The test server's URL through a PgBouncer in transaction mode, for the session."""
    if binary() is None:
        pytest.skip(WHY_MISSING)
    with pgbouncer(os.environ.get("CHRONICA_TEST_PG_URL", DEFAULT_URL)) as url:
        yield url
