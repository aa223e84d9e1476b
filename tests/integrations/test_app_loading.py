"""The integrations' Django apps load without their frameworks: a server, a worker or a
management command of a project that installs them, and never runs an agent, does not
import PydanticAI or LangChain (a second or more of every start)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FRAMEWORKS = ("pydantic_ai", "langchain_core", "langgraph", "google.adk", "agents")

LOADED = """
import json, sys
import django
django.setup()
from django.apps import apps
print(json.dumps({
    "apps": [config.name for config in apps.get_app_configs()],
    "modules": sorted(name for name in sys.modules if name.split(".")[0] in
                      ("pydantic_ai", "langchain_core", "langgraph", "google", "agents")),
}))
"""


def loaded(settings: str) -> dict[str, list[str]]:
    done = subprocess.run(
        [sys.executable, "-c", LOADED],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "DJANGO_SETTINGS_MODULE": settings},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(done.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def test_the_apps_load_without_importing_their_frameworks() -> None:
    found = loaded("example_project.settings")
    assert "chronica.integrations.pydantic_ai" in found["apps"]
    assert "chronica.integrations.langgraph" in found["apps"]
    imported = [m for m in found["modules"] if m.startswith(FRAMEWORKS)]
    assert imported == []


def test_the_names_still_import_on_first_use() -> None:
    from chronica.integrations import langgraph, pydantic_ai

    assert pydantic_ai.ChronicaHistory.__module__.endswith(".history")
    assert pydantic_ai.ChronicaConversationStore.__module__.endswith(".store")
    assert callable(pydantic_ai.actum_of)
    assert callable(pydantic_ai.message_of)
    assert langgraph.ChronicaSaver.__module__.endswith(".saver")
    with pytest.raises(AttributeError, match="NotAName"):
        pydantic_ai.NotAName  # noqa: B018
