"""example_project's settings, with a store that is slow after each create
(``tests.teststores.SlowCreateStore``): the HTTP race tests serve the example with it."""

from example_project.settings import *  # noqa: F403

CHRONICA = {**CHRONICA, "STORE": "tests.teststores.SlowCreateStore"}  # noqa: F405

# Each of gunicorn's threads keeps its database connection, as a deployed WSGI server
# does (example_project's CONN_MAX_AGE is 0: it also serves ASGI, where Django asks for 0).
# A connection a request made the shared PostgreSQL server fork a backend for each of the
# races' 24,000 requests (~7 ms of its processor each, ~4 min a build); the races still
# catch their bugs with it (the replay's owner check or the write's taken out: both fail
# within 300 rounds, measured, stop 53).
DATABASES["default"]["CONN_MAX_AGE"] = None  # noqa: F405
