"""An actum's ``data``: what JSON every database gives back equal, and its text as
chronica stores and serves it."""

from __future__ import annotations

import json
import math
import re
from typing import Any

from ..errors import InvalidActum
from .identifiers import SURROGATE


def check_json(value: Any, depth: int = 0) -> None:
    """``value`` is JSON every database gives back equal, else ``InvalidActum``: a
    tuple would come back a list, an int key a string key, NaN is not JSON at all."""
    if depth > 200:
        raise InvalidActum("data is nested more than 200 levels deep")
    if value is None or isinstance(value, bool | int):
        return
    if isinstance(value, str):
        if "\x00" in value:
            raise InvalidActum("data contains a NUL character in a string")
        if SURROGATE.search(value):
            raise InvalidActum("data contains a lone surrogate in a string")
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidActum(f"data contains {value!r}, which is not a JSON number")
        return
    if isinstance(value, list):
        for item in value:
            check_json(item, depth + 1)
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise InvalidActum(
                    f"data has an object key of type {type(key).__name__}; JSON keys are strings"
                )
            if "\x00" in key:
                raise InvalidActum("data contains a NUL character in an object key")
            if SURROGATE.search(key):
                raise InvalidActum("data contains a lone surrogate in an object key")
            check_json(item, depth + 1)
        return
    raise InvalidActum(f"data contains a {type(value).__name__}, which is not a JSON value")


_BIG_FLOAT = 1e16
_PLACEHOLDER = "\x00f"


def dumps_data(data: Any) -> str:
    """The JSON text of ``data`` (already checked) as chronica stores it.

    Compact, UTF-8 as is. A float of 1e16 or more is written out in full with a
    ``.0`` (``10000000000000000.0``, not ``1e+16``): PostgreSQL's ``jsonb`` keeps
    numbers as decimals and prints ``1e+16`` back without a point, which would turn
    the float into an int.
    """
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    if "e+" not in text:
        return text
    floats: list[float] = []

    def mark(value: Any) -> Any:
        if isinstance(value, float) and abs(value) >= _BIG_FLOAT:
            floats.append(value)
            return f"{_PLACEHOLDER}{len(floats) - 1}"
        if isinstance(value, list):
            return [mark(item) for item in value]
        if isinstance(value, dict):
            return {key: mark(item) for key, item in value.items()}
        return value

    text = json.dumps(mark(data), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    # A NUL cannot occur in checked data, so the placeholders are unambiguous.
    for i, value in enumerate(floats):
        text = text.replace(f'"\\u0000f{i}"', f"{int(value)}.0", 1)
    return text


def loads_data(text: str | None) -> Any:
    """``data`` back from its stored JSON text (``None`` for no data)."""
    if text is None:
        return None
    return json.loads(text)


class RawJSON:
    """JSON text passed through as it is: an actum's stored ``data`` read for the API,
    which writes ``text`` into its answer verbatim (``chronica.api.renderers``) instead
    of decoding it into Python objects and encoding them again. A store hands one back
    only for a query with ``raw_data``. Not a ``str`` (a renderer that does not know it
    would quote it): any other encoder refuses it.

    ``stored`` is the text as the database printed it (PostgreSQL's ``jsonb`` with
    its spaces), ``text`` the compact one, made from it when first read."""

    __slots__ = ("_text", "stored")

    def __init__(self, text: str) -> None:
        self._text: str | None = text
        self.stored = text

    @classmethod
    def as_stored(cls, stored: str) -> RawJSON:
        """The data a database handed back, compacted only when ``text`` is read."""
        raw = cls.__new__(cls)
        raw._text = None
        raw.stored = stored
        return raw

    @property
    def text(self) -> str:
        """The compact text (:func:`compact_json`), what the API's answers write."""
        text = self._text
        if text is None:
            text = self._text = compact_json(self.stored)
        return text

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RawJSON):
            return NotImplemented
        return self.text == other.text

    def __hash__(self) -> int:
        return hash(self.text)

    def __repr__(self) -> str:
        shown = self.text if len(self.text) <= 40 else self.text[:40] + "..."
        return f"RawJSON({shown!r})"


# A JSON string token, escapes included: what compact_json leaves untouched.
_JSON_STRING = re.compile(r'("(?:[^"\\]|\\.)*")')


def compact_json(text: str) -> str:
    """Valid JSON text without the whitespace between its tokens that PostgreSQL's
    ``jsonb`` prints (``", "`` and ``": "``), as :func:`dumps_data` writes it: the
    answer the decoded value would have given. Without a string in it (``[[],...]``) one
    ``str.replace``; otherwise only the text between strings is touched."""
    if ", " not in text and ": " not in text:
        return text
    if '"' not in text:
        return text.replace(", ", ",")
    parts = _JSON_STRING.split(text)
    # Odd positions are the strings; the rest is punctuation, numbers and literals.
    for i in range(0, len(parts), 2):
        part = parts[i]
        if " " in part:
            parts[i] = part.replace(", ", ",").replace(": ", ":")
    return "".join(parts)
