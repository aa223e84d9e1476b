"""The store's query for a context window or a follow, and the other arguments of
the reading calls, from what a caller passed."""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import Any, TypeVar

from ..errors import InvalidActum, InvalidQuery
from ..values import FILTERS, ActaQuery, Chronicum
from .identifiers import check_identifier, storable

_E = TypeVar("_E", bound=StrEnum)


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
    max_bytes: int | None = None,
    raw_data: bool = False,
    **filters: Iterable[Any] | str | None,
) -> ActaQuery:
    """The store's query from a window's (or a follow's) keyword arguments, as
    ``services.get_acta`` takes them; ``InvalidQuery`` for what cannot be.

    ``filters`` are those of ``chronica.values.FILTERS``, each ``None``, one value
    or an iterable of them: unknown enum values are refused, and so is an identifier
    that no actum could hold. ``last_n <= 0`` means no limit; ``max_tokens`` is
    ``None`` (no budget) or at least 0; ``before`` is ``None`` or an actum ID;
    ``max_bytes`` is ``None`` or a positive int; ``raw_data`` is ``True`` or ``False``.
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
    if max_bytes is not None and (
        isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1
    ):
        raise InvalidQuery(f"max_bytes must be a positive int, not {max_bytes!r}")
    if not isinstance(raw_data, bool):
        raise InvalidQuery(f"raw_data must be True or False, not {raw_data!r}")
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
        max_bytes=max_bytes,
        raw_data=raw_data,
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
