"""example_project's settings, with a store that is slow after each create
(``tests.teststores.SlowCreateStore``): the HTTP race tests serve the example with it."""

from example_project.settings import *  # noqa: F403

CHRONICA = {**CHRONICA, "STORE": "tests.teststores.SlowCreateStore"}  # noqa: F405
