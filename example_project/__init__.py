"""The example project: chronica used the way a Django project would use it.

``celery -A example_project`` finds the Celery app as ``example_project.celery_app``.
It is imported on first use, not here: a command that needs no Celery (the agent
service ``make demo`` prints, ``python -m example_project.dinner.http_agent``) runs
where Celery is not installed.
"""

from typing import Any

__all__ = ("celery_app",)


def __getattr__(name: str) -> Any:
    if name == "celery_app":
        from .celery import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
