"""The module functions of chronica.services read like the Chronicarius methods they call.

``help(services.get_acta)``, ``inspect.signature`` and the API reference (docs/reference.md)
show the method's signature without ``self`` and its whole docstring, not a pointer to it.
"""

from __future__ import annotations

import inspect

import pytest

from chronica import services
from chronica.services import Chronicarius

# Functions of their own, not the method called on the configured Chronicarius:
# acting_as (the configured Chronicarius, acting as someone) and the deprecated
# record and arecord, which warn and answer a Recorded.
_OWN_FUNCTIONS = {"acting_as", "arecord", "record"}

MODULE_FUNCTIONS = sorted(
    name
    for name in services.__all__
    if inspect.isfunction(getattr(services, name))
    and inspect.isfunction(getattr(Chronicarius, name, None))
    and name not in _OWN_FUNCTIONS
)


def test_every_method_the_module_calls_is_covered() -> None:
    # The sync and async reads, writes and state calls, and afollow.
    assert len(MODULE_FUNCTIONS) >= 27
    assert {"get_acta", "aget_acta", "record_actum", "arecord_acta", "afollow"} <= set(
        MODULE_FUNCTIONS
    )


@pytest.mark.parametrize("name", MODULE_FUNCTIONS)
def test_signature_is_the_methods_without_self(name: str) -> None:
    function = getattr(services, name)
    method = inspect.signature(getattr(Chronicarius, name))
    signature = inspect.signature(function)
    assert "self" not in signature.parameters
    assert signature == method.replace(parameters=list(method.parameters.values())[1:])


@pytest.mark.parametrize("name", MODULE_FUNCTIONS)
def test_docstring_is_the_methods(name: str) -> None:
    function = getattr(services, name)
    assert function.__doc__
    assert function.__doc__ == getattr(Chronicarius, name).__doc__
    assert inspect.getdoc(function) == inspect.getdoc(getattr(Chronicarius, name))


@pytest.mark.parametrize("name", MODULE_FUNCTIONS)
def test_names_itself_in_chronica_services(name: str) -> None:
    function = getattr(services, name)
    assert function.__name__ == name
    assert function.__qualname__ == name
    assert function.__module__ == "chronica.services"
    assert inspect.iscoroutinefunction(function) == inspect.iscoroutinefunction(
        getattr(Chronicarius, name)
    )
