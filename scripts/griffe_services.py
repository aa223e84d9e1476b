"""The API reference's view of ``chronica.services`` (mkdocs.yml loads this Griffe extension).

The module builds its functions at import, ``get_acta = _on_configured(Chronicarius.get_acta)``,
and the ``a*`` methods of Chronicarius likewise (``aget_acta = async_twin(get_acta)``), which
Griffe's static analysis sees as attributes without a signature. This turns each into the
function it is at run time: the Chronicarius method's parameters without ``self``, its return
annotation and its docstring, as ``chronica.services`` gives them to ``help()`` and ``inspect``
(tests/core/test_module_functions.py).
"""

from __future__ import annotations

from typing import Any

import griffe

_BUILDERS = {"_on_configured": False, "_on_configured_async": True}


def _called(value: object, function: str) -> griffe.Expr | None:
    """The one argument of ``function(argument)`` if ``value`` is that call, else None."""
    if (
        isinstance(value, griffe.ExprCall)
        and isinstance(value.function, griffe.ExprName)
        and value.function.name == function
        and len(value.arguments) == 1
        and isinstance(value.arguments[0], griffe.Expr)
    ):
        return value.arguments[0]
    return None


def _method(cls: griffe.Class, name: str) -> tuple[griffe.Function, bool, str | None]:
    """Chronicarius's method ``name``: the function it runs, whether it is async, and the
    docstring it has (an ``a*`` twin has a docstring of its own)."""
    member = cls.all_members[name]
    target = member.final_target if isinstance(member, griffe.Alias) else member
    if isinstance(target, griffe.Function):
        docstring = target.docstring.value if target.docstring else None
        return target, "async" in target.labels, docstring
    twin_of = _called(target.value, "async_twin") if isinstance(target, griffe.Attribute) else None
    if not isinstance(twin_of, griffe.ExprName):
        raise LookupError(f"Chronicarius.{name} is neither a method nor async_twin(method)")
    function, _, _ = _method(cls, twin_of.name)
    return function, True, f"Async twin of :meth:`{twin_of.name}`."


class ModuleFunctions(griffe.Extension):
    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        if pkg.path != "chronica":
            return
        services = pkg["services"]
        chronicarius = services["Chronicarius"]
        for name, member in list(services.members.items()):
            if not isinstance(member, griffe.Attribute):
                continue
            for builder, is_async in _BUILDERS.items():
                argument = _called(member.value, builder)
                if isinstance(argument, griffe.ExprAttribute) and argument.last.name == name:
                    method, method_async, docstring = _method(chronicarius, name)
                    function = griffe.Function(
                        name,
                        lineno=member.lineno,
                        endlineno=member.endlineno,
                        parameters=griffe.Parameters(*list(method.parameters)[1:]),
                        returns=method.returns,
                        docstring=griffe.Docstring(docstring, parent=None) if docstring else None,
                    )
                    if is_async or method_async:
                        function.labels.add("async")
                    services.set_member(name, function)
                    if function.docstring:
                        function.docstring.parent = function
