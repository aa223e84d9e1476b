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

from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.utils import encoders

from ..validation import RawJSON

__all__ = ["RawJSONRenderer", "dumps", "takes_raw"]


def _dump(value: Any) -> str:
    # DRF's JSONRenderer with its default settings (COMPACT_JSON, UNICODE_JSON,
    # STRICT_JSON), which takes_raw requires.
    return json.dumps(
        value,
        cls=encoders.JSONEncoder,
        ensure_ascii=False,
        allow_nan=False,
        separators=(",", ":"),
    )


def _text(value: Any) -> str:
    if isinstance(value, RawJSON):
        return value.text
    if isinstance(value, Mapping):
        if not any(isinstance(item, (RawJSON, Mapping, list)) for item in value.values()):
            return _dump(value)
        return "{" + ",".join(f"{_dump(k)}:{_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_text(item) for item in value) + "]"
    return _dump(value)


def dumps(value: Any) -> str:
    """``value`` as DRF's JSONRenderer writes it, each ``RawJSON`` in it spliced in as
    it is (the text of a JSON value, compact)."""
    return _text(value).replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


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


def takes_raw(request: Request) -> bool:
    """Whether the answer to ``request`` is rendered by DRF's own ``JSONRenderer``, with
    the settings :func:`dumps` follows and no indent: then it may carry ``RawJSON``."""
    renderer = getattr(request, "accepted_renderer", None)
    media_type = getattr(request, "accepted_media_type", "") or ""
    return (
        type(renderer) is JSONRenderer
        and "indent" not in media_type
        and renderer.compact
        and not renderer.ensure_ascii
        and renderer.strict
        and renderer.encoder_class is encoders.JSONEncoder
    )
