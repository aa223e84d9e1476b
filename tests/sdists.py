"""A pinned release's source distribution, downloaded once per virtualenv (``pip download``)
and unpacked there, for the tests it ships (LangGraph's, the OpenAI Agents SDK's)."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path


def sdist(package: str, version: str, marker: str) -> Path:
    """The unpacked sdist of ``package==version``; ``marker``, a file in it, says it is
    complete. CI's legs share a virtualenv and collect at the same time: the first takes
    the lock and downloads, the others wait for it and find the sdist there."""
    dist = package.replace("-", "_")
    cache = Path(sys.prefix) / f"{package}-sdist"
    unpacked = cache / f"{dist}-{version}"
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (unpacked / marker).is_file():
            return unpacked
        with tempfile.TemporaryDirectory(dir=cache) as download:
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "download",
                    "--quiet",
                    "--no-deps",
                    # The package as its sdist (it carries the tests); its build backend
                    # as wheels: built from source too, they drag in setuptools-scm,
                    # which warns under PYTHONWARNINGS=error.
                    "--no-binary",
                    package,
                    "--dest",
                    download,
                    f"{package}=={version}",
                ],
                check=True,
                env={k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"},
            )
            (archive,) = Path(download).glob(f"{dist}-*.tar.gz")
            with tarfile.open(archive) as tar:
                tar.extractall(download, filter="data")
            # One rename, so that an interrupted download never looks like a finished one.
            (Path(download) / unpacked.name).rename(unpacked)
    return unpacked
