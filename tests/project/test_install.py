"""A new user's first ten minutes: the built wheel in a fresh venv and a new project.

The wheel is built as ``make dist`` builds it, installed with the extras from
PyPI into a venv that knows nothing of this checkout, and a project made by
``django-admin startproject`` follows the README's "Install into your project",
"Quickstart" and "Agents that run as services" as written: the snippets are read
from README.md itself, so the README and this test cannot drift apart. Then
runserver serves the API to ardian, signed in through the browsable API's login,
and to ardian's agent, with ardian's token.

Only what a person would type differently is adapted: a free port instead of
8000, and the superuser's password from ``DJANGO_SUPERUSER_PASSWORD`` because a
test cannot type it.
"""

from __future__ import annotations

import http.cookiejar
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.exampleproject import ROOT, free_port, serving
from tests.readme import blocks, commands, section

PROJECT_VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]

pytestmark = [pytest.mark.slow, pytest.mark.once]

PASSWORD = "ardian-quickstart-password"


@dataclass
class Checkout:
    """The fresh venv and the new project in it."""

    root: Path
    project: Path
    env: dict[str, str]

    def sh(self, command: str, *, cwd: Path | None = None, stdin: str = "") -> str:
        """Run one README shell line as typed, with the fresh venv first on PATH."""
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=cwd or self.project,
            env=self.env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert done.returncode == 0, f"$ {command}\n{done.stdout}\n{done.stderr}"
        return done.stdout


def fresh_environment(venv: Path) -> dict[str, str]:
    """The environment of a new shell with the venv activated: nothing of this checkout."""
    keep = ("HOME", "LANG", "LC_ALL", "TMPDIR", "USER", "PIP_INDEX_URL", "PIP_CACHE_DIR")
    env = {name: os.environ[name] for name in keep if name in os.environ}
    env.update(
        {name: value for name, value in os.environ.items() if name.startswith("PIP_")},
        PATH=f"{venv / 'bin'}:/usr/local/bin:/usr/bin:/bin",
        VIRTUAL_ENV=str(venv),
        PYTHONIOENCODING="utf-8",
    )
    return env


def build_wheel(outdir: Path) -> Path:
    """``make dist``'s command: the sdist, then the wheel built from it."""
    subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(outdir), str(ROOT)],
        capture_output=True,
        check=True,
    )
    (wheel,) = outdir.glob("chronica-*.whl")
    return wheel


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Checkout]:
    if os.environ.get("CHRONICA_TEST_DB") == "postgres":
        # The new project runs on the SQLite file startproject's settings name, never on
        # the database this run tests: the SQLite run of the same build tests it whole.
        pytest.skip("the new project's database is its own SQLite file: the SQLite run has it")
    root = tmp_path_factory.mktemp("newcomer")
    wheel = build_wheel(root / "dist")
    names = zipfile.ZipFile(wheel).namelist()
    assert {name.split("/")[0] for name in names} == {
        "chronica",
        wheel.name.split("-py3")[0] + ".dist-info",
    }
    assert "chronica/migrations/0001_initial.py" in names
    assert "chronica/py.typed" in names
    # The licence ships with the code: in the wheel's metadata and at the sdist's root.
    dist_info = wheel.name.split("-py3")[0] + ".dist-info"
    assert f"{dist_info}/licenses/LICENSE" in names
    (sdist,) = (root / "dist").glob("chronica-*.tar.gz")
    with tarfile.open(sdist) as archive:
        assert f"{sdist.name.removesuffix('.tar.gz')}/LICENSE" in archive.getnames()

    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = fresh_environment(venv)
    yield Checkout(root=root, project=root / "mysite", env=env)
    shutil.rmtree(root, ignore_errors=True)


def test_a_new_project_follows_the_readme_and_serves_ardian(checkout: Checkout) -> None:
    install = section("Install into your project")
    (pip,) = [line for line in commands(blocks(install, "sh")[0]) if ".whl" in line]
    checkout.sh(pip, cwd=checkout.root)
    located = checkout.sh(
        "python -c 'import chronica, django; print(chronica.__file__, django.VERSION)'",
        cwd=checkout.root,
    )
    assert located.startswith(str(checkout.root / "venv")), located  # the wheel, not this checkout

    checkout.sh("django-admin startproject mysite", cwd=checkout.root)
    settings_py, urls_py = blocks(install, "python")
    assert settings_py.startswith("# settings.py\n")
    assert urls_py.startswith("# urls.py\n")
    with (checkout.project / "mysite" / "settings.py").open("a", encoding="utf-8") as settings:
        settings.write("\n" + settings_py)
    with (checkout.project / "mysite" / "urls.py").open("a", encoding="utf-8") as urls:
        urls.write("\n" + urls_py)
    for command in commands(blocks(install, "sh")[1]):
        checkout.sh(command)
    assert "System check identified no issues" in checkout.sh("python manage.py check")

    quickstart = section("Quickstart")
    create_user, runserver = (commands(b) for b in blocks(quickstart, "sh"))
    (createsuperuser,) = create_user
    checkout.env["DJANGO_SUPERUSER_PASSWORD"] = PASSWORD
    checkout.sh(f"{createsuperuser} --noinput")
    (shell_input,) = blocks(quickstart, "python")
    first = checkout.sh("python manage.py shell", stdin=shell_input)
    again = checkout.sh("python manage.py shell", stdin=shell_input)  # pasted twice: no error
    (url,) = re.findall(r"^(/api/chronica/\S+/acta/)$", again, flags=re.M)
    assert url not in first

    port = free_port()
    assert runserver == ["python manage.py runserver"]
    server = ["bash", "-c", f"exec python manage.py runserver 127.0.0.1:{port} --noreload"]
    log = checkout.root / "runserver.log"
    with serving(
        server, port, log, cwd=checkout.project, env=checkout.env, ready="/api-auth/login/"
    ) as base:
        # ardian signs in through the browsable API's login and reads what the shell recorded.
        acta = signed_in_as_ardian(base, url)
        assert [(a["actor"], a["kind"]) for a in acta] == [
            ("ardian", "message"),
            ("booking", "message"),
        ]

        # ardian's agent, with ardian's token, writes as the README shows.
        agents = section("The REST API").split("### Agents that run as services", 1)[1]
        mint, curl = commands(blocks(agents, "sh")[0])
        token = checkout.sh(mint).split()[2]  # "Generated token <key> for user ardian"
        checkout.env["TOKEN"] = token
        written = json.loads(checkout.sh(curl.replace("127.0.0.1:8000", f"127.0.0.1:{port}")))
        assert (written["actor"], written["content"]) == ("booking", "Held.")
        # The paging loop of "Paging a window", with that token, as typed.
        paging = section("The REST API").split("**Paging a window.**", 1)[1]
        (loop,) = blocks(paging, "sh")[:1]
        pages = checkout.sh(loop.replace("127.0.0.1:8000", f"127.0.0.1:{port}"))
        assert json.loads(pages)[-1]["content"] == "Held."
        status, body = fetch(f"{base}/api/chronica/dinner-friday/", Authorization=f"Token {token}")
        assert status == 200
        assert json.loads(body)["owner_id"] == acta_owner(base, url, token)

        # "Agents that run as services": booking's own credential, issued as the README
        # shows; its forged message from ardian is refused and nothing is written.
        issue, forge, *_ = commands(blocks(section("Agents that run as services"), "sh")[0])
        assert issue.startswith("SECRET=$("), issue
        assert issue.endswith(")"), issue
        owner = acta_owner(base, url, token)
        minted = issue.removeprefix("SECRET=$(").removesuffix(")")
        secret = checkout.sh(minted.replace("--owner 1", f"--owner {owner}")).strip()
        assert secret.startswith("chr_agent_"), secret
        checkout.env["SECRET"] = secret
        refused = json.loads(checkout.sh(forge.replace("127.0.0.1:8000", f"127.0.0.1:{port}")))
        assert refused["rule"] == "actor", refused
        status, body = fetch(
            f"{base}/api/chronica/dinner-friday/acta/", Authorization=f"Token {token}"
        )
        assert [a["content"] for a in json.loads(body)] == ["Held."]

        # Swagger UI from the sidecar: a page and its script, both from this server.
        status, page = fetch(f"{base}/api/docs/")
        assert status == 200
        (script,) = re.findall(
            r'src="(/static/drf_spectacular_sidecar/[^"]+bundle\.js)"', page.decode()
        )
        assert fetch(base + script)[0] == 200
        # Its title and chronica's version, not drf-spectacular's blank and 0.0.0.
        status, schema = fetch(f"{base}/api/schema/?format=json")
        assert status == 200
        info = json.loads(schema)["info"]
        assert (info["title"], info["version"]) == ("chronica API", PROJECT_VERSION)


def fetch(url: str, data: bytes | None = None, opener=None, **headers: str) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=data, headers=headers)
    try:
        with (opener or urllib.request.build_opener()).open(request, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def signed_in_as_ardian(base: str, path: str) -> list[dict[str, object]]:
    """Sign in at /api-auth/login/ as a person would, then GET ``path`` as JSON."""
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    login = f"{base}/api-auth/login/?next={urllib.parse.quote(path)}"
    status, page = fetch(login, opener=opener)
    assert status == 200
    (csrf,) = re.findall(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.decode())
    form = {"username": "ardian", "password": PASSWORD, "csrfmiddlewaretoken": csrf, "next": path}
    status, _ = fetch(login, urllib.parse.urlencode(form).encode(), opener, Referer=login)
    assert status == 200  # redirected to ``path``: urllib follows a 302 after a POST with a GET
    status, body = fetch(base + path, opener=opener, Accept="application/json")
    assert status == 200, body
    return json.loads(body)


def acta_owner(base: str, path: str, token: str) -> str:
    """The owner of the quickstart's chronicum, read with ardian's token."""
    status, body = fetch(base + path.removesuffix("acta/"), Authorization=f"Token {token}")
    assert status == 200, body
    return json.loads(body)["owner_id"]
