"""JSON answers that carry acta's ``data`` as stored, never decoded.

A window's ``data`` can be megabytes of JSON made of millions of tiny containers
(``[[],[],...]``): decoded, each becomes a Python object, hundreds of bytes of
memory for every few bytes of text, and seconds of CPU to build and encode again
(BENCHMARKS.md). The API reads ``data`` as its JSON text instead
(``chronica.validation.raw_data``, a :class:`~chronica.validation.RawJSON`) and
writes that text into the answer as it is: :func:`dumps` is DRF's
``JSONRenderer`` (compact, UTF-8, U+2028 and U+2029 escaped) for any value with
``RawJSON`` in it, and :class:`RawJSONRenderer` renders with it.

Where the answer is DRF's own ``JSONRenderer`` or DRF's browsable API showing it
(:func:`takes_raw`); a project's own JSON renderer gets decoded values, as before.
An ``indent`` indents chronica's fields and leaves ``data`` as stored, compact: it
adds a few bytes a field, never a few bytes for each of the millions of values a
``data`` can hold (indented, ``[[[...]]]`` grows with the square of its depth).
"""

from __future__ import annotations

import functools
import json
import re
import secrets
from collections.abc import Mapping
from typing import Any

from rest_framework.renderers import BaseRenderer, BrowsableAPIRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.utils import encoders

from ..validation.jsondata import RawJSON

__all__ = [
    "ChronicaBrowsableAPIRenderer",
    "JSONArray",
    "RawBrowsableAPIRenderer",
    "RawJSONRenderer",
    "answer_indent",
    "dumps",
    "raw_renderer",
    "takes_raw",
]


def _dump(value: Any, indent: int | None = None) -> str:
    # DRF's JSONRenderer with its default settings (COMPACT_JSON, UNICODE_JSON,
    # STRICT_JSON), which takes_raw requires; indented as the browsable API or an
    # Accept header's indent asks, with DRF's separators.
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
        return _joined(items, "{}", indent, level)
    return _joined([_text(item, indent, level + 1) for item in value], "[]", indent, level)


def _joined(items: list[str], brackets: str, indent: int | None, level: int) -> str:
    if indent is None:
        return brackets[0] + ",".join(items) + brackets[1]
    if not items:
        return brackets
    inner = "\n" + " " * indent * (level + 1)
    return (
        brackets[0] + inner + ("," + inner).join(items) + "\n" + " " * indent * level + brackets[1]
    )


def _escaped(text: str) -> str:
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


# Each RawJSON is written by the encoder as a string that holds this process's secret
# (never sent) and its number, which one pass then replaces with the RawJSON's text:
# the value is encoded by one call of the C encoder, however many RawJSON it holds.
# No stored string can be taken for a mark: a mark starts with NUL, which chronica
# refuses in every text and JSON value it stores (validation), and holds a secret
# drawn when the process starts.
_MARK = "\x00" + secrets.token_hex(16) + ":"
_MARKED = re.compile(re.escape(json.dumps(_MARK, ensure_ascii=False))[:-1] + r'(\d+)"')


class _Marking(encoders.JSONEncoder):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.raw: list[str] = []

    def default(self, obj: Any) -> Any:
        if isinstance(obj, RawJSON):
            self.raw.append(obj.text)
            return f"{_MARK}{len(self.raw) - 1}"
        return super().default(obj)


def dumps(value: Any, indent: int | None = None) -> str:
    """``value`` as DRF's JSONRenderer writes it, each ``RawJSON`` in it spliced in as
    it is (the text of a JSON value, compact even where ``indent`` indents the rest)."""
    encoder = _Marking(
        ensure_ascii=False,
        allow_nan=False,
        indent=indent,
        separators=(",", ":") if indent is None else (",", ": "),
    )
    text = encoder.encode(value)
    raw = encoder.raw
    if raw:
        text = _MARKED.sub(lambda found: raw[int(found.group(1))], text)
    return _escaped(text)


def _octets(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode())


class JSONArray:
    """A JSON array of items, as DRF's JSONRenderer writes a list of them: its text,
    written once, and its bytes; when it must be cut, each item's text and the bytes
    the array of some of them takes, its brackets, commas and indentation included."""

    def __init__(self, items: list[Any], indent: int | None) -> None:
        self.items, self.indent = items, indent
        self.whole = dumps(items, indent)
        #: The bytes of the whole array.
        self.size = _octets(self.whole)
        # What the array adds: its brackets, and before every item but the first.
        self.brackets = 2 if indent is None else 4 + indent
        self.separator = 1 if indent is None else 2 + indent

    @functools.cached_property
    def texts(self) -> list[str]:
        """Each item as it stands in the array, one level in."""
        return [_escaped(_text(item, self.indent, 1)) for item in self.items]

    @functools.cached_property
    def sizes(self) -> list[int]:
        """The bytes of each item in the array."""
        return [_octets(text) for text in self.texts]

    def text(self, start: int = 0) -> RawJSON:
        """The array of the items from ``start`` on."""
        if start == 0:
            return RawJSON(self.whole)
        return RawJSON(_joined(self.texts[start:], "[]", self.indent, 0))


class RawJSONRenderer(JSONRenderer):
    """DRF's ``JSONRenderer``, writing each ``RawJSON`` of the answer verbatim; an
    ``indent`` asked for (``Accept: application/json; indent=4``) indents the rest."""

    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: Mapping[str, Any] | None = None,
    ) -> bytes:
        if data is None:
            return b""
        indent = self.get_indent(accepted_media_type or "", renderer_context or {})
        return dumps(data, indent).encode()


class ChronicaBrowsableAPIRenderer(BrowsableAPIRenderer):
    """DRF's ``BrowsableAPIRenderer``, with one breadcrumb a route: chronica's routes
    answer with and without their trailing slash (``optional_slash``), and DRF lists
    both spellings of each as two crumbs of the same name."""

    def get_breadcrumbs(self, request: Request) -> list[tuple[str, str]]:
        kept: list[tuple[str, str]] = []
        for name, url in super().get_breadcrumbs(request):
            if kept and kept[-1][0] == name:
                kept[-1] = (name, url)  # the spelling with the slash, which comes second
            else:
                kept.append((name, url))
        return kept


class RawBrowsableAPIRenderer(ChronicaBrowsableAPIRenderer):
    """DRF's ``BrowsableAPIRenderer``, showing each ``RawJSON`` of the answer verbatim
    (compact, in the indented rest)."""

    indent = 4  # DRF's browsable API indents its JSON so

    def get_content(
        self,
        renderer: BaseRenderer,
        data: Any,
        accepted_media_type: str | None,
        renderer_context: Mapping[str, Any],
    ) -> str:
        if type(renderer) is not JSONRenderer:
            return str(super().get_content(renderer, data, accepted_media_type, renderer_context))
        return dumps(data, indent=self.indent)


# DRF's browsable API, as the project names it or as chronica's views serve it.
_BROWSABLE = (BrowsableAPIRenderer, ChronicaBrowsableAPIRenderer)


def takes_raw(request: Request) -> bool:
    """Whether the answer to ``request`` is rendered by DRF's own ``JSONRenderer``, with
    the settings :func:`dumps` follows (indented or not), or by DRF's own browsable API
    showing that renderer's answer: then it may carry ``RawJSON``, and
    :func:`raw_renderer` renders it."""
    renderer = getattr(request, "accepted_renderer", None)
    if isinstance(renderer, BrowsableAPIRenderer) and type(renderer) in _BROWSABLE:
        view = request.parser_context.get("view") if request.parser_context else None
        renderer = None if view is None else renderer.get_default_renderer(view)
    return (
        type(renderer) is JSONRenderer
        and renderer.compact
        and not renderer.ensure_ascii
        and renderer.strict
        and renderer.encoder_class is encoders.JSONEncoder
    )


def answer_indent(request: Request) -> int | None:
    """The indent of the JSON the answer to ``request`` holds, where :func:`takes_raw`:
    the ``indent`` of its ``Accept`` header (DRF's rule: 0 to 8), and the browsable
    API's 4."""
    renderer = request.accepted_renderer
    if type(renderer) in _BROWSABLE:
        return RawBrowsableAPIRenderer.indent
    media_type = getattr(request, "accepted_media_type", "") or ""
    indent: int | None = JSONRenderer().get_indent(media_type, {})
    return indent


def raw_renderer(request: Request) -> BaseRenderer:
    """The renderer of ``request``'s answer once it carries ``RawJSON`` (see
    :func:`takes_raw`)."""
    if type(request.accepted_renderer) in _BROWSABLE:
        return RawBrowsableAPIRenderer()
    return RawJSONRenderer()
