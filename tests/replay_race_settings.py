"""example_project's settings for the HTTP replay race (tests/stores/test_isolation.py):
a request that sends ``X-Test-Pause: <seconds>`` waits that long before each SQL
statement after its first on the acta table (its write), as a loaded database would
between two statements, so that another client's delete and write fall between a keyed
write's statements."""

import threading

from django.db.backends.signals import connection_created

from example_project.settings import *  # noqa: F403

_request = threading.local()


class PauseBetweenStatements:
    def __init__(self, get_response):  # type: ignore[no-untyped-def]
        self.get_response = get_response

    def __call__(self, request):  # type: ignore[no-untyped-def]
        _request.pause = float(request.headers.get("X-Test-Pause", "0"))
        _request.written = False
        try:
            return self.get_response(request)
        finally:
            _request.pause = 0.0


def _pause_after_the_first(execute, sql, params, many, context):  # type: ignore[no-untyped-def]
    pause = getattr(_request, "pause", 0.0)
    if pause and _request.written:
        threading.Event().wait(pause)
    elif pause and " acta" in sql:
        _request.written = True
    return execute(sql, params, many, context)


def _wrap(connection, **kwargs: object) -> None:  # type: ignore[no-untyped-def]
    # A thread's wrapper object outlives its connections: wrap it once.
    if _pause_after_the_first not in connection.execute_wrappers:
        connection.execute_wrappers.append(_pause_after_the_first)


connection_created.connect(_wrap, dispatch_uid="tests.replay_race_settings")
MIDDLEWARE = ["tests.replay_race_settings.PauseBetweenStatements", *MIDDLEWARE]  # noqa: F405

# Each of gunicorn's threads keeps its database connection (tests/race_settings.py says why).
DATABASES["default"]["CONN_MAX_AGE"] = None  # noqa: F405
