"""Checks of caller input, shared by every Chronicarius call.

Everything a store could not keep the same way on every database is refused here,
before a store is touched, so that no raw database error reaches a caller and
every store behaves alike.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import re
import unicodedata
from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Any, TypeVar

from .errors import EmptyOwnerID, InvalidActum, InvalidQuery, OwnerIDNotAString
from .values import (
    FILTERS,
    ActaQuery,
    ActorKind,
    Actum,
    ActumKind,
    Chronicum,
    StateChange,
    StateScope,
)

MAX_LENGTH = 255
"""The longest chronicum ID, actor, call ID, owner and idempotency key chronica accepts."""

DEFAULT_MAX_ACTUM_BYTES = 4 * 1024 * 1024
"""The default limit of ``content`` plus the JSON of ``data``, in bytes of UTF-8."""

_E = TypeVar("_E", bound=StrEnum)

# A lone surrogate (JSON can carry one as "\ud800") is a Python str no database
# driver can encode: refuse it here instead of half-writing and failing in the driver.
_SURROGATE = re.compile("[\ud800-\udfff]")
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
"""A control character (C0, DEL and C1, tab and newline included): never part of an
identifier a person could read or type (rule 2). The one pattern every check uses."""
# What makes two different chronicum IDs read the same (IDs are global, so one could
# pass for another's): format characters (category Cf: bidi controls, zero-width
# spaces and joiners, the byte order mark, the soft hyphen, tag characters) and the
# other code points Unicode says to show as nothing (Default_Ignorable_Code_Point,
# from DerivedCoreProperties.txt: variation selectors, the combining grapheme joiner,
# the Hangul fillers, reserved tags), the braille blank, the no-break spaces (they
# read as a plain space) and the line and paragraph separators.
_VARIATION_SELECTOR = re.compile("[\u180b-\u180d\u180f\ufe00-\ufe0f\U000e0100-\U000e01ef]")
_FILLER = re.compile("[\u115f\u1160\u3164\uffa0\u2800]")
_NO_BREAK_SPACE = re.compile("[\u00a0\u2007\u202f]")
_INVISIBLE = re.compile(
    "[\u034f\u17b4\u17b5\u2028\u2029\u2065\ufff0-\ufff8\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)
_KINDS_UNSEEN = (
    (_VARIATION_SELECTOR, "variation selector"),
    (_FILLER, "filler character"),
    (_NO_BREAK_SPACE, "no-break space"),
    (_INVISIBLE, "invisible character"),
)
_UNSEEN = re.compile("|".join(pattern.pattern for pattern, _ in _KINDS_UNSEEN))
_TOOL_KINDS = (ActumKind.TOOL_REQUEST, ActumKind.TOOL_RESPONSE)
_KNOWN_KINDS = ", ".join(k.value for k in ActumKind)
_KNOWN_ACTOR_KINDS = ", ".join(k.value for k in ActorKind)


def check_owner(owner_id: object) -> None:
    """Every call names an owner."""
    if owner_id is None or owner_id == "":
        raise EmptyOwnerID("owner_id is empty")
    if not isinstance(owner_id, str):
        raise OwnerIDNotAString(
            f"owner_id must be a string, not {type(owner_id).__name__}:"
            " pass services.owner_id_for(user) (or str(user.pk))"
        )


def storable(value: object) -> bool:
    """Whether ``value`` can be an ID any store keeps: a string, not too long, no NUL,
    no lone surrogate."""
    return (
        isinstance(value, str)
        and len(value) <= MAX_LENGTH
        and "\x00" not in value
        # (an ASCII string, most IDs, holds no surrogate: no search of it)
        and (value.isascii() or not _SURROGATE.search(value))
    )


def _check_text(name: str, value: object, *, limit: int | None = MAX_LENGTH) -> None:
    if not isinstance(value, str):
        raise InvalidActum(f"{name} must be a string, not {type(value).__name__}")
    if "\x00" in value:
        raise InvalidActum(f"{name} contains a NUL character")
    if _SURROGATE.search(value):
        raise InvalidActum(f"{name} contains a lone surrogate, which is not valid Unicode text")
    if limit is not None and len(value) > limit:
        raise InvalidActum(f"{name} is longer than {limit} characters")


def check_identifier(name: str, value: object) -> None:
    """An ID, an actor, an owner or a key: a string of at most 255 characters with no
    control character (tab and newline included) and nothing no database can keep."""
    _check_text(name, value)
    assert isinstance(value, str)
    if found := CONTROL.search(value):
        raise InvalidActum(f"{name} contains the control character {found.group()!r}")


def check_chronicum_id(chronicum_id: object) -> str:
    """A chronicum ID a person can read, type and put in a URL, and that reads like
    no other ID.

    Besides the rules of every identifier: not empty, no space at either end, not
    ``.`` or ``..`` (which URLs resolve away); in Unicode NFC (``"café"`` typed as
    ``e`` and a combining accent is refused, with the NFC spelling in the message);
    no format character (category Cf: bidi controls, zero-width spaces and joiners,
    the byte order mark, tag characters), no variation selector, no filler (U+3164
    and the other Hangul fillers, the braille blank), no other character that shows
    as nothing (U+034F and the rest of Unicode's default-ignorable code points), no
    no-break space and no line or paragraph separator. Raises ``InvalidActum``.
    """
    check_identifier("chronicum_id", chronicum_id)
    assert isinstance(chronicum_id, str)
    if chronicum_id == "":
        raise InvalidActum("chronicum_id is empty")
    if chronicum_id in (".", ".."):
        raise InvalidActum(f"chronicum_id {chronicum_id!r} cannot be named in a URL")
    if chronicum_id != chronicum_id.strip():
        raise InvalidActum("chronicum_id starts or ends with white space")
    if chronicum_id.isascii():
        return chronicum_id  # none of the below is ASCII
    refusal = _unicode_refusal(chronicum_id)
    if refusal is not None:
        raise InvalidActum(refusal)
    return chronicum_id


@functools.lru_cache(maxsize=1024)
def _unicode_refusal(chronicum_id: str) -> str | None:
    """Why a chronicum ID that is not ASCII is refused, or ``None``. Cached: a batch
    names its chronicum once per actum."""
    char = _unseen(chronicum_id)
    if char is not None:
        if unicodedata.category(char) == "Cf":
            what = "format character"
        else:
            what = next(w for pattern, w in _KINDS_UNSEEN if pattern.match(char))
        return (
            f"chronicum_id contains the {what} U+{ord(char):04X}"
            f" ({unicodedata.name(char, 'unnamed')}): a chronicum ID holds no"
            " character that is not shown, so that no two IDs read the same"
        )
    if not unicodedata.is_normalized("NFC", chronicum_id):
        return (
            "chronicum_id is not in Unicode NFC (normalization form C): the same name in"
            f" NFC is {unicodedata.normalize('NFC', chronicum_id)!r}"
        )
    return None


def _unseen(text: str) -> str | None:
    """The first character of ``text`` a chronicum ID may not hold, if any."""
    found = _UNSEEN.search(text)
    end = found.start() if found else len(text)
    category = unicodedata.category
    for char in text[:end]:
        if category(char) == "Cf":
            return char
    return found.group() if found else None


def _check_json(value: Any, depth: int = 0) -> None:
    # Only what every database gives back equal: a tuple would come back a list,
    # an int key a string key, NaN is not JSON at all.
    if depth > 200:
        raise InvalidActum("data is nested more than 200 levels deep")
    if value is None or isinstance(value, bool | int):
        return
    if isinstance(value, str):
        if "\x00" in value:
            raise InvalidActum("data contains a NUL character in a string")
        if _SURROGATE.search(value):
            raise InvalidActum("data contains a lone surrogate in a string")
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidActum(f"data contains {value!r}, which is not a JSON number")
        return
    if isinstance(value, list):
        for item in value:
            _check_json(item, depth + 1)
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise InvalidActum(
                    f"data has an object key of type {type(key).__name__}; JSON keys are strings"
                )
            if "\x00" in key:
                raise InvalidActum("data contains a NUL character in an object key")
            if _SURROGATE.search(key):
                raise InvalidActum("data contains a lone surrogate in an object key")
            _check_json(item, depth + 1)
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


def check_actum(
    owner_id: str, actum: object, key: str | None, max_bytes: int | None = DEFAULT_MAX_ACTUM_BYTES
) -> Actum:
    """Refuse what no store could keep the same way, before the store is touched."""
    if not isinstance(actum, Actum):
        raise InvalidActum(f"actum must be a chronica.Actum, not {type(actum).__name__}")
    check_identifier("owner_id", owner_id)
    check_chronicum_id(actum.chronicum_id)
    check_identifier("actor", actum.actor)
    if actum.actor == "":
        raise InvalidActum("actor is empty")
    if not isinstance(actum.kind, ActumKind):
        raise InvalidActum(f"unknown kind {actum.kind!r} (known: {_KNOWN_KINDS})")
    if not isinstance(actum.actor_kind, ActorKind):
        raise InvalidActum(f"unknown actor_kind {actum.actor_kind!r} (known: {_KNOWN_ACTOR_KINDS})")
    _check_text("content", actum.content, limit=None)
    if actum.content == "" and actum.kind in (ActumKind.MESSAGE, ActumKind.THOUGHT):
        raise InvalidActum(f"content is empty (a {actum.kind.value} needs content)")
    check_identifier("call_id", actum.call_id)
    if actum.call_id and actum.kind not in _TOOL_KINDS:
        raise InvalidActum(
            f"a {actum.kind.value} cannot carry a call_id; only a tool_request or a"
            " tool_response can"
        )
    size = len(actum.content.encode()) if max_bytes is not None else 0
    if actum.data is not None:
        try:
            _check_json(actum.data)
        except RecursionError:
            raise InvalidActum("data is nested too deeply") from None
        if max_bytes is not None:
            size += len(dumps_data(actum.data).encode())
    if max_bytes is not None and size > max_bytes:
        raise InvalidActum(
            f"content and data are {size} bytes of UTF-8, more than the limit of {max_bytes}"
            " (CHRONICA['MAX_ACTUM_BYTES'])"
        )
    if key is not None:
        check_identifier("idempotency_key", key)
    return actum


def check_batch(
    owner_id: str,
    acta: object,
    key: str | None,
    max_bytes: int | None = DEFAULT_MAX_ACTUM_BYTES,
) -> list[Actum]:
    """Every actum of a batch, checked before any is written; all of one chronicum."""
    if isinstance(acta, Actum | str | bytes | dict) or not isinstance(acta, Iterable):
        raise InvalidActum(f"acta must be a list of chronica.Actum, not {type(acta).__name__}")
    batch = list(acta)
    for position, actum in enumerate(batch):
        try:
            check_actum(owner_id, actum, key, max_bytes)
        except InvalidActum as exc:
            if len(batch) == 1:
                raise
            raise InvalidActum(f"actum {position}: {exc}") from None
    chronicum_ids = {actum.chronicum_id for actum in batch}
    if len(chronicum_ids) > 1:
        raise InvalidActum(
            "a batch goes into one chronicum; these acta name "
            + ", ".join(repr(c) for c in sorted(chronicum_ids))
        )
    return batch


def normalize_key(key: object) -> str | None:
    """An empty key is no key."""
    if key is None or key == "":
        return None
    return key  # type: ignore[return-value]


def _members(enum: type[_E], name: str, values: Iterable[Any] | str | None) -> frozenset[_E]:
    if values is None:
        return frozenset()
    if isinstance(values, str):
        values = (values,)
    members = set()
    for value in values:
        try:
            members.add(enum(value))
        except ValueError:
            known = ", ".join(m.value for m in enum)
            raise InvalidQuery(f"unknown {name} {value!r} (known: {known})") from None
    return frozenset(members)


def _integer(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidQuery(f"{name} must be an integer, not {type(value).__name__}")
    return value


def build_query(
    *,
    last_n: int = 0,
    max_tokens: int | None = None,
    before: str | None = None,
    **filters: Iterable[Any] | str | None,
) -> ActaQuery:
    """The store's query from a window's (or a follow's) keyword arguments, as
    ``services.get_acta`` takes them; ``InvalidQuery`` for what cannot be.

    ``filters`` are those of ``chronica.values.FILTERS``, each ``None``, one value
    or an iterable of them: unknown enum values are refused, and so is an identifier
    that no actum could hold. ``last_n <= 0`` means no limit; ``max_tokens`` is
    ``None`` (no budget) or at least 0; ``before`` is ``None`` or an actum ID.
    """
    last_n = _integer("last_n", last_n)
    if max_tokens is not None:
        max_tokens = _integer("max_tokens", max_tokens)
        if max_tokens < 0:
            raise InvalidQuery(f"max_tokens must be 0 or more, not {max_tokens}")
    if before is not None and not isinstance(before, str):
        raise InvalidQuery(f"before must be an actum ID (a string), not {type(before).__name__}")
    if before is not None and not storable(before):
        # No store can hold such an ID, so it names no actum.
        raise InvalidQuery(f"before={before[:40]!r} is not an actum of this chronicum")
    unknown = set(filters) - _FILTER_FIELDS
    if unknown:
        raise TypeError(f"build_query() got unexpected keyword argument(s): {sorted(unknown)}")
    checked = {
        f.field: _members(f.choices, f.name, filters.get(f.field))
        if f.choices is not None
        else _identifiers(f.name, filters.get(f.field))
        for f in FILTERS
    }
    return ActaQuery(
        last_n=max(last_n, 0),
        max_tokens=max_tokens,
        before=before,
        **checked,  # type: ignore[arg-type]
    )


_FILTER_FIELDS = frozenset(f.field for f in FILTERS)


def _identifiers(name: str, values: Iterable[Any] | str | None) -> frozenset[str]:
    """A filter's identifiers (actor IDs): strings any actum could hold, else
    ``InvalidQuery``, as they would match nothing."""
    if values is None:
        return frozenset()
    if isinstance(values, str):
        values = (values,)
    if not isinstance(values, Iterable):
        raise InvalidQuery(f"{name} must be IDs (strings), not {type(values).__name__}")
    found = set()
    for value in values:
        if not isinstance(value, str):
            raise InvalidQuery(f"{name} must be a string, not {type(value).__name__}")
        if not value:
            # No actum has an empty actor (rule 2): such a filter would match nothing.
            raise InvalidQuery(f"{name} holds an empty actor ID")
        try:
            check_identifier(name, value)
        except InvalidActum as exc:
            raise InvalidQuery(str(exc)) from None
        found.add(value)
    return frozenset(found)


def check_whole_tool_calls(whole_tool_calls: object) -> bool:
    """``get_acta``'s ``whole_tool_calls``: ``True`` or ``False``."""
    if not isinstance(whole_tool_calls, bool):
        raise InvalidQuery(
            f"whole_tool_calls must be True or False, not {type(whole_tool_calls).__name__}"
        )
    return whole_tool_calls


def check_after(after: object) -> str | None:
    """``afollow``'s ``after``: ``None`` or an actum ID (a string)."""
    if after is not None and not isinstance(after, str):
        raise InvalidQuery(f"after must be an actum ID (a string), not {type(after).__name__}")
    return after


@dataclasses.dataclass(frozen=True, slots=True)
class Parameter:
    """One argument of a context window or of a follow, as the edges spell it.

    The API's query parameters, their OpenAPI description and the commands' flags
    are all made from :data:`PARAMETERS`; what a value may be is judged once, by
    :func:`build_query` (and ``check_whole_tool_calls``, ``check_after``), with the
    keyword arguments the edges read.
    """

    name: str
    """``?name=`` in the API, ``--name`` (``_`` as ``-``) on the command line."""
    argument: str
    """The keyword argument of ``services.get_acta`` (and ``afollow``) it gives."""
    type: type[str] | type[int] | type[bool]
    help: str
    """What it does, in a few lowercase words (the commands show it as it is)."""
    repeatable: bool = False
    """Given several times, a list (and in the API, comma-separated values too)."""
    choices: tuple[str, ...] = ()
    minimum: int | None = None
    window: bool = True
    """Whether ``get_acta`` (and the window's API call and ``chronica_show``) take it."""
    follow: bool = False
    """Whether ``afollow`` (and the stream and ``chronica_follow``) take it."""
    command: bool = True
    """Whether the management commands offer it."""


PARAMETERS: tuple[Parameter, ...] = (
    *(
        Parameter(
            f.name,
            f.field,
            str,
            f.help,
            repeatable=True,
            choices=tuple(m.value for m in f.choices) if f.choices is not None else (),
            follow=True,
        )
        for f in FILTERS
    ),
    Parameter(
        "last_n",
        "last_n",
        int,
        "after the filters, only the newest N acta (0 or less: no limit)",
    ),
    Parameter(
        "max_tokens",
        "max_tokens",
        int,
        "after the filters, only the newest acta whose token counts add up to at most N;"
        " the first that does not fit ends the window",
        minimum=0,
    ),
    Parameter(
        "whole_tool_calls",
        "whole_tool_calls",
        bool,
        "leave out every tool response whose tool request (the same call_id) is not in"
        " the window, so that no model gets a result without its call",
        command=False,
    ),
    Parameter(
        "before",
        "before",
        str,
        "an actum ID of this chronicum: the window is taken from the acta recorded before it",
        command=False,
    ),
    Parameter(
        "after",
        "after",
        str,
        "an actum ID of this chronicum: start after it (absent: from now)",
        window=False,
        follow=True,
    ),
)
"""Every argument of a window and of a follow, each declared once."""

WINDOW_PARAMETERS = tuple(p for p in PARAMETERS if p.window)
"""What ``get_acta`` takes (and the window's API call, and ``chronica_show``)."""
FOLLOW_PARAMETERS = tuple(p for p in PARAMETERS if p.follow)
"""What ``afollow`` takes (and the stream, and ``chronica_follow``)."""


MAX_LIST_LIMIT = 1000


def check_listing(limit: object, before: object) -> tuple[int, Chronicum | str | None]:
    """``list_chronica``'s page size (1 to 1000) and where the page starts."""
    limit = _integer("limit", limit)
    if not 1 <= limit <= MAX_LIST_LIMIT:
        raise InvalidQuery(f"limit must be from 1 to {MAX_LIST_LIMIT}, not {limit}")
    if before is not None and not isinstance(before, Chronicum | str):
        raise InvalidQuery(
            "before must be the last chronicum of the previous page (or its ID),"
            f" not {type(before).__name__}"
        )
    return limit, before


def check_token_count(count: object, actum: Actum) -> int:
    """What a token counter returned: an integer of 0 or more."""
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise TypeError(
            f"the token counter returned {count!r} for an actum of kind {actum.kind};"
            " it must return an int of 0 or more"
        )
    return count


def check_state_changes(changes: object, max_bytes: int | None) -> list[StateChange]:
    """Every ``StateChange`` of a write, checked before anything is written: a
    namespace chronica can keep, string keys, JSON values, at most ``max_bytes``
    (``CHRONICA["MAX_ACTUM_BYTES"]``) of JSON each, one namespace for the chronicum."""
    if isinstance(changes, StateChange | str | bytes | dict) or not isinstance(changes, Iterable):
        raise InvalidActum(
            f"state must be a list of chronica.StateChange, not {type(changes).__name__}"
        )
    checked = list(changes)
    for change in checked:
        if not isinstance(change, StateChange):
            raise InvalidActum(f"state must hold StateChange values, not {type(change).__name__}")
        check_identifier("namespace", change.namespace)
        if change.namespace == "":
            raise InvalidActum("a state change names no namespace")
        if not isinstance(change.scope, StateScope):
            raise InvalidActum(f"unknown state scope {change.scope!r}")
        if not isinstance(change.path, tuple) or not all(isinstance(k, str) for k in change.path):
            raise InvalidActum("a state change's path must be a tuple of strings")
        if not isinstance(change.replace, bool):
            raise InvalidActum("a state change's replace must be True or False")
        for name, value in (("set", change.set), ("expect", change.expect)):
            if value is None and name == "expect":
                continue
            if not isinstance(value, Mapping):
                raise InvalidActum(f"a state change's {name} must be a mapping")
            try:
                _check_json({"path": list(change.path), name: dict(value)})
            except InvalidActum as exc:
                raise InvalidActum(f"state: {exc}") from None
            except RecursionError:
                raise InvalidActum("state is nested too deeply") from None
            if max_bytes is not None:
                size = len(dumps_data(dict(value)).encode())
                if size > max_bytes:
                    raise InvalidActum(
                        f"a state change is {size} bytes of JSON, more than the limit of"
                        f" {max_bytes} (CHRONICA['MAX_ACTUM_BYTES'])"
                    )
    if len({c.namespace for c in checked if c.scope is StateScope.CHRONICUM}) > 1:
        raise InvalidActum("a write changes the chronicum's state in one namespace only")
    return checked
