"""Django settings for LangGraph's own tests: chronica's test settings under a module
name that does not collide with LangGraph's ``tests`` package."""

import runpy
from pathlib import Path

_settings = runpy.run_path(str(Path(__file__).resolve().parents[3] / "settings.py"))
globals().update({name: value for name, value in _settings.items() if name.isupper()})

# LangGraph's tests resolve no URL; this module is an empty URLconf.
ROOT_URLCONF = __name__
urlpatterns: list[object] = []
