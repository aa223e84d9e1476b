"""OpenTelemetry spans for chronica's calls (the optional extra ``chronica[otel]``).

Every public call of ``Chronicarius`` (and so every module function of
``chronica.services``, which calls it) is one span, named and described per the
OpenTelemetry GenAI memory semantic conventions: ``search_memory chronica`` for a
read, ``update_memory chronica`` for a write, ``delete_memory chronica`` for a delete
or a pop. A call made inside another traced call (``record_actum`` calls
``record_acta``; an ``a*`` twin calls its sync method in a thread) adds no span of its
own: one call, one span.

Without ``opentelemetry-api`` installed, :func:`traced` returns each method as it is:
no cost at all. With the API but no SDK (its own tracer provider), a call starts no
span: the check costs one lookup. The owner ID is
never recorded (it may be personal data); the content of acta only with
``CHRONICA["OTEL_RECORD_CONTENT"] = True``.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import inspect
import json
from collections.abc import Callable
from typing import Any, TypeVar

try:
    from opentelemetry import trace as _trace
except ImportError:  # chronica without the extra: no spans, and no cost
    _trace = None  # type: ignore[assignment]

__all__ = ["FRAMES", "OPERATIONS", "STORE_ID", "enabled", "instrument", "traced"]

#: ``gen_ai.memory.store.id`` and ``gen_ai.provider.name`` of every span.
STORE_ID = "chronica"

_SEARCH, _UPDATE, _DELETE = "search_memory", "update_memory", "delete_memory"

#: ``gen_ai.operation.name`` of each public call (its ``a*`` twin has the same).
OPERATIONS: dict[str, str] = {
    "get_acta": _SEARCH,
    "get_acta_page": _SEARCH,
    "get_chronicum": _SEARCH,
    "list_chronica": _SEARCH,
    "list_chronica_page": _SEARCH,
    "get_state": _SEARCH,
    "list_namespace": _SEARCH,
    "afollow": _SEARCH,
    "record_actum": _UPDATE,
    "record_acta": _UPDATE,
    "create_chronicum": _UPDATE,
    "update_state": _UPDATE,
    "delete_chronicum": _DELETE,
    "pop_actum": _DELETE,
}

_F = TypeVar("_F", bound=Callable[..., Any])

#: The frames a traced method's own ``warnings.warn`` must add to its ``stacklevel``
#: to name its caller (the deprecated ``record`` and ``arecord`` are not traced: the
#: ``record_acta`` they call is).
FRAMES = 0 if _trace is None else 1

# The tracer providers of the API alone (opentelemetry-api without an SDK).
_NO_SDK = () if _trace is None else (_trace.ProxyTracerProvider, _trace.NoOpTracerProvider)

# Set while a traced call runs: a call it makes (or its twin's thread, which copies
# the context) is part of its span, not a second one.
_inside: contextvars.ContextVar[bool] = contextvars.ContextVar("chronica_span", default=False)


def enabled() -> bool:
    """Whether ``opentelemetry-api`` is installed (and so chronica's calls are traced)."""
    return _trace is not None


def _spans() -> bool:
    """Whether a span would go anywhere: not while the tracer provider is the API's own
    (no SDK set up yet, or its no-op provider), whose tracers hand out spans that record
    nothing. Asked at each call: a provider set up later is used from then on."""
    return not isinstance(_trace.get_tracer_provider(), _NO_SDK)


def _record_content() -> bool:
    try:
        from .conf import chronica_settings

        return chronica_settings.OTEL_RECORD_CONTENT
    except Exception:  # no Django settings: a Chronicarius used outside Django
        return False


def _content(value: Any) -> str | None:
    """The acta (or actum) ``value`` holds, as JSON of their content and data."""
    from .values import Actum

    value = getattr(value, "acta", value)  # an ActaPage: its window
    if isinstance(value, Actum):
        value = [value]
    if not isinstance(value, list | tuple) or not all(isinstance(a, Actum) for a in value):
        return None
    return json.dumps(
        [{"kind": str(a.kind), "content": a.content, "data": a.data} for a in value],
        default=str,
        ensure_ascii=False,
    )


def _conversation_id(arguments: dict[str, Any], result: Any = None) -> str | None:
    """The chronicum the call names: its ``chronicum_id``, that of the acta it records,
    or that of the chronicum it returns."""
    from .values import Actum, Chronicum

    chronicum_id = arguments.get("chronicum_id")
    if isinstance(chronicum_id, str):
        return chronicum_id
    for key in ("actum", "acta"):
        value = arguments.get(key)
        if isinstance(value, Actum):
            return value.chronicum_id
        if isinstance(value, list | tuple) and value and isinstance(value[0], Actum):
            return value[0].chronicum_id
    if isinstance(result, Chronicum):
        return result.id
    return None


def traced(method: _F) -> _F:
    """``method`` (a Chronicarius method, sync or async) in a span of its own."""
    if _trace is None:
        return method
    trace = _trace
    name = method.__name__
    base = name[1:] if name.startswith("a") and name[1:] in OPERATIONS else name
    operation = OPERATIONS[base]
    signature = inspect.signature(method)
    tracer = trace.get_tracer("chronica")

    def start(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        span = tracer.start_span(
            f"{operation} {STORE_ID}",
            attributes={
                "gen_ai.operation.name": operation,
                "gen_ai.provider.name": STORE_ID,
                "gen_ai.memory.store.id": STORE_ID,
                "gen_ai.memory.type": "episodic",
                "chronica.method": name,
            },
        )
        arguments: dict[str, Any] = {}
        if span.is_recording():  # the API alone (no SDK): nothing more to do
            with contextlib.suppress(TypeError):
                arguments = dict(signature.bind(*args, **kwargs).arguments)
        return span, arguments

    def finish(span: Any, arguments: dict[str, Any], result: Any) -> None:
        if not span.is_recording():
            return
        conversation = _conversation_id(arguments, result)
        if conversation is not None:
            span.set_attribute("gen_ai.conversation.id", conversation)
        if operation == _SEARCH:
            # A list, or a page of one (ActaPage.acta, ChronicaPage.chronica).
            items = getattr(result, "acta", getattr(result, "chronica", result))
            if isinstance(items, list):
                span.set_attribute("gen_ai.memory.search.result.count", len(items))
        if _record_content():
            content = _content(result if operation != _UPDATE else None) or _content(
                arguments.get("acta", arguments.get("actum"))
            )
            if content is not None:
                span.set_attribute("gen_ai.memory.content", content)

    def fail(span: Any, arguments: dict[str, Any], exc: BaseException) -> None:
        conversation = _conversation_id(arguments)
        if conversation is not None:
            span.set_attribute("gen_ai.conversation.id", conversation)
        span.record_exception(exc)
        span.set_attribute("error.type", type(exc).__qualname__)
        span.set_status(trace.Status(trace.StatusCode.ERROR, str(exc)))

    if inspect.iscoroutinefunction(method):

        @functools.wraps(method)
        async def atraced(*args: Any, **kwargs: Any) -> Any:
            if _inside.get() or not _spans():
                return await method(*args, **kwargs)
            span, arguments = start(args, kwargs)
            token = _inside.set(True)
            try:
                with trace.use_span(
                    span, end_on_exit=False, record_exception=False, set_status_on_exception=False
                ):
                    result = await method(*args, **kwargs)
            except Exception as exc:
                fail(span, arguments, exc)
                raise
            else:
                finish(span, arguments, result)
                return result
            finally:
                _inside.reset(token)
                span.end()

        return atraced  # type: ignore[return-value]

    @functools.wraps(method)
    def synctraced(*args: Any, **kwargs: Any) -> Any:
        if _inside.get() or not _spans():
            return method(*args, **kwargs)
        span, arguments = start(args, kwargs)
        token = _inside.set(True)
        try:
            with trace.use_span(
                span, end_on_exit=False, record_exception=False, set_status_on_exception=False
            ):
                result = method(*args, **kwargs)
        except Exception as exc:
            fail(span, arguments, exc)
            raise
        else:
            finish(span, arguments, result)
            return result
        finally:
            _inside.reset(token)
            span.end()

    return synctraced  # type: ignore[return-value]


def instrument(cls: type) -> None:
    """Wrap every public call of Chronicarius (``cls``) in :func:`traced`, once."""
    if _trace is None:
        return
    for base in list(OPERATIONS):
        for name in (base, f"a{base}"):
            method = getattr(cls, name, None)
            if method is not None and not getattr(method, "_chronica_traced", False):
                wrapped = traced(method)
                wrapped._chronica_traced = True
                setattr(cls, name, wrapped)
