"""Case 16, attack (issue 20 item 2): one user's heavy window against a uvicorn worker.

A chronicum of 40 acta whose ``data`` is ``[[],[],...]`` (``ATTACK_LISTS`` empty lists
each, 1.2 MB of JSON by default; the attack of the issue had 2.4 MB): a few bytes of
JSON each that become a whole Python object when read. The attacker asks for the
whole window three times; meanwhile another user reads a small window every 0.1 s.
Measured: the rise of the worker's peak RSS over its RSS before the attack (VmHWM,
Linux), and the other user's slowest answer. Targets: < +256 MB, < 1 s.

``python -m benchmarks.attack [ROOT [ACCEPT]]`` runs it on the example project of the
checkout at ROOT (default: this one), on a SQLite file of its own, the attacker asking
for ACCEPT (default ``application/json``; ``text/html`` is the browsable API);
``make bench`` runs it as case 16, both ways.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LISTS = int(os.environ.get("ATTACK_LISTS", "400000"))
ACTA = 40

_SETUP = """
import django, json, sys
django.setup()
from django.contrib.auth.models import User
from rest_framework.authtoken.models import Token
from chronica import Actum, services
lists = int(sys.argv[1])
tokens = {}
for name in ("mallory", "ardian"):
    user = User.objects.create_user(name)
    tokens[name] = Token.objects.create(user=user).key
    owner = services.owner_id_for(user)
    services.create_chronicum(owner, f"{name}-session")
    services.record_acta(owner, [Actum(chronicum_id=f"{name}-session", kind="message",
        actor_kind="human", actor=name, content=f"hello {n}") for n in range(20)])
mallory = services.owner_id_for(User.objects.get(username="mallory"))
for n in range(%(acta)d):
    services.record_acta(mallory, [Actum(chronicum_id="mallory-session", kind="tool_response",
        actor_kind="agent", actor="search", content="", data=[[]] * lists)])
print(json.dumps(tokens))
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _kb(pid: int, field: str) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise LookupError(field)


def _get(url: str, token: str, accept: str = "application/json") -> tuple[int, int, float]:
    began = time.monotonic()
    headers = {"Authorization": f"Token {token}", "Accept": accept}
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=600) as response:
            size = len(response.read())
            return response.status, size, time.monotonic() - began
    except urllib.error.HTTPError as exc:
        return exc.code, len(exc.read()), time.monotonic() - began


def measure(
    root: Path = ROOT, lists: int = LISTS, accept: str = "application/json"
) -> dict[str, float]:
    """The attack; ``accept``: what the attacker asks for (``text/html``: the browsable
    API)."""
    with tempfile.TemporaryDirectory(prefix="chronica-attack-") as tmp:
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "example_project.settings",
            "DATABASE_URL": f"sqlite:///{tmp}/attack.sqlite3",
            "PYTHONPATH": str(root),
            "DJANGO_THROTTLE_USER": "100000/minute",
        }
        python = sys.executable
        subprocess.run([python, "manage.py", "migrate", "-v0"], cwd=root, env=env, check=True)
        setup = subprocess.run(
            [python, "-c", _SETUP % {"acta": ACTA}, str(lists)],
            cwd=root,
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )
        tokens = json.loads(setup.stdout.strip().splitlines()[-1])
        port = _free_port()
        server = subprocess.Popen(
            [
                python,
                "-m",
                "uvicorn",
                "example_project.asgi:application",
                "--port",
                str(port),
                "--host",
                "127.0.0.1",
                "--no-proxy-headers",
                "--log-level",
                "warning",
            ],
            cwd=root,
            env=env,
        )
        base = f"http://127.0.0.1:{port}/api/chronica"
        small = f"{base}/ardian-session/acta/?last_n=5"
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    _get(small, tokens["ardian"])
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.2)
            for _ in range(3):
                _get(small, tokens["ardian"])
            before = _kb(server.pid, "VmRSS")
            with open(f"/proc/{server.pid}/clear_refs", "w") as refs:
                refs.write("5")
            done = threading.Event()
            slowest = [0.0]

            def other_user() -> None:
                while not done.is_set():
                    status, _, took = _get(small, tokens["ardian"])
                    assert status == 200, status
                    slowest[0] = max(slowest[0], took)
                    time.sleep(0.1)

            watcher = threading.Thread(target=other_user)
            watcher.start()
            sizes, took = [], []
            try:
                for _ in range(3):
                    status, size, seconds = _get(
                        f"{base}/mallory-session/acta/?last_n={ACTA}", tokens["mallory"], accept
                    )
                    assert status == 200, status
                    sizes.append(size)
                    took.append(seconds)
            finally:
                done.set()
                watcher.join()
            peak = _kb(server.pid, "VmHWM")
        finally:
            server.terminate()
            server.wait(timeout=30)
    return {
        "rss_rise_mb": (peak - before) / 1024,
        "other_user_s": slowest[0],
        "attack_s": max(took),
        "answer_mb": max(sizes) / 2**20,
    }


def run() -> list:  # type: ignore[type-arg]
    from .report import Row, met

    rows = []
    for accept, asked in (("application/json", "JSON"), ("text/html", "browsable API")):
        got = measure(accept=accept)
        rows += [
            Row(
                "16 attack",
                f"worker peak RSS rise, {ACTA} acta of [[],...] x{LISTS:,} ({asked})",
                f"+{got['rss_rise_mb']:.0f} MB",
                "",
                "",
                "< +256 MB",
                met(got["rss_rise_mb"] < 256),
            ),
            Row(
                "16 attack",
                f"another user's slowest request during it ({asked})",
                f"{got['other_user_s']:.2f} s",
                "",
                "",
                "< 1 s",
                met(got["other_user_s"] < 1),
            ),
            Row(
                "16 attack",
                f"the attacker's answer ({asked})",
                f"{got['answer_mb']:.1f} MB in {got['attack_s']:.1f} s",
            ),
        ]
    return rows


if __name__ == "__main__":
    root = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else ROOT
    accept = sys.argv[2] if len(sys.argv) > 2 else "application/json"
    print(json.dumps(measure(root, accept=accept), indent=2))
