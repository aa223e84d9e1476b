"""JSON answers that carry acta's ``data`` as stored, never decoded.

A window's ``data`` can be megabytes of JSON made of millions of tiny containers
(``[[],[],...]``): decoded, each becomes a Python object, hundreds of bytes of
memory for every few bytes of text, and seconds of CPU to build and encode again
(BENCHMARKS.md, "Issue 20"). The API reads ``data`` as its JSON text instead
(``chronica.validation.raw_data``, a :class:`~chronica.validation.RawJSON`) and
writes that text into the answer as it is: :func:`dumps` is DRF's
``JSONRenderer`` (compact, UTF-8, U+2028 and U+2029 escaped) for any value with
``RawJSON`` in it, and :class:`RawJSONRenderer` renders with it.

Only where the answer is exactly DRF's ``JSONRenderer`` without an indent
(:func:`takes_raw`): a project's own JSON renderer, an indented answer and the
browsable API get decoded values, as before.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from rest_framework.renderers import BaseRenderer, BrowsableAPIRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.utils import encoders

from ..validation import RawJSON

__all__ = ["RawBrowsableAPIRenderer", "RawJSONRenderer", "dumps", "raw_renderer", "takes_raw"]


def _dump(value: Any, indent: int | None = None) -> str:
    # DRF's JSONRenderer with its default settings (COMPACT_JSON, UNICODE_JSON,
    # STRICT_JSON), which takes_raw requires; indented as the browsable API asks.
    return json.dumps(
        value,
        cls=encoders.JSONEncoder,
        ensure_ascii=False,
        allow_nan=False,
        indent=indent,
        separators=(",", ":") if indent is None else (",", ": "),
    )


def _text(value: Any, indent: int | None, level: int) -> str:
    if isinstance(value, RawJSON):
        return value.text
    nested = isinstance(value, Mapping) and any(
        isinstance(item, (RawJSON, Mapping, list)) for item in value.values()
    )
    if not nested and not isinstance(value, list):
        text = _dump(value, indent)
        # A JSON text holds no newline but between tokens.
        return text if indent is None else text.replace("\n", "\n" + " " * indent * level)
    if isinstance(value, Mapping):
        colon = ":" if indent is None else ": "
        items = [f"{_dump(k)}{colon}{_text(v, indent, level + 1)}" for k, v in value.items()]
        brackets = "{}"
    else:
        items = [_text(item, indent, level + 1) for item in value]
        brackets = "[]"
    if indent is None:
        return brackets[0] + ",".join(items) + brackets[1]
    if not items:
        return brackets
    inner = "\n" + " " * indent * (level + 1)
    return (
        brackets[0] + inner + ("," + inner).join(items) + "\n" + " " * indent * level + brackets[1]
    )


def dumps(value: Any, indent: int | None = None) -> str:
    """``value`` as DRF's JSONRenderer writes it, each ``RawJSON`` in it spliced in as
    it is (the text of a JSON value, compact even where ``indent`` indents the rest)."""
    return _text(value, indent, 0).replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


class RawJSONRenderer(JSONRenderer):
    """DRF's ``JSONRenderer``, writing each ``RawJSON`` of the answer verbatim."""

    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: Mapping[str, Any] | None = None,
    ) -> bytes:
        if data is None:
            return b""
        return dumps(data).encode()


class RawBrowsableAPIRenderer(BrowsableAPIRenderer):
    """DRF's ``BrowsableAPIRenderer``, showing each ``RawJSON`` of the answer verbatim
    (compact, in the indented rest)."""

    def get_content(
        self,
        renderer: BaseRenderer,
        data: Any,
        accepted_media_type: str | None,
        renderer_context: Mapping[str, Any],
    ) -> str:
        if type(renderer) is not JSONRenderer:
            return str(super().get_content(renderer, data, accepted_media_type, renderer_context))
        return dumps(data, indent=4)


def takes_raw(request: Request) -> bool:
    """Whether the answer to ``request`` is rendered by DRF's own ``JSONRenderer``, with
    the settings :func:`dumps` follows and no indent, or by DRF's own browsable API
    showing that renderer's answer: then it may carry ``RawJSON``, and
    :func:`raw_renderer` renders it."""
    renderer = getattr(request, "accepted_renderer", None)
    media_type = getattr(request, "accepted_media_type", "") or ""
    if type(renderer) is BrowsableAPIRenderer:
        view = request.parser_context.get("view") if request.parser_context else None
        renderer = None if view is None else renderer.get_default_renderer(view)
    elif "indent" in media_type:
        return False
    return (
        type(renderer) is JSONRenderer
        and renderer.compact
        and not renderer.ensure_ascii
        and renderer.strict
        and renderer.encoder_class is encoders.JSONEncoder
    )


def raw_renderer(request: Request) -> BaseRenderer:
    """The renderer of ``request``'s answer once it carries ``RawJSON`` (see
    :func:`takes_raw`)."""
    if type(request.accepted_renderer) is BrowsableAPIRenderer:
        return RawBrowsableAPIRenderer()
    return RawJSONRenderer()
