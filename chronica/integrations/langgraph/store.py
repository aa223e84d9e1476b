"""One owner's long-term memory for LangGraph: ``ChronicaStore``.

A ``langgraph.store.base.BaseStore`` on this app's table ``chronica_langgraph_items``
(on the database Django routes it to): ``get``, ``put``, ``delete``, ``search`` by
namespace prefix and filter (a key is a dotted path into the value, as in LangGraph's
SQL stores), ``list_namespaces``, and TTL (``supports_ttl``; an
expired item is not read, and ``sweep_ttl()`` deletes expired ones). Every item
belongs to the store's owner: another owner's items are never read, listed or
touched. ``search(query=...)`` has no semantic index here: the query is ignored and
items come newest first (``score`` is ``None``), as LangGraph's stores do without one.

    store = ChronicaStore("ardian")
    graph = builder.compile(checkpointer=ChronicaSaver("ardian"), store=store)
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from typing import Any

from django.db.models import Q
from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
    validate_op_namespace,
)

from chronica import EmptyOwnerID

from .models import LangGraphItem
from .rows import Rows, closes_its_connection
from .runs import in_sync_thread

__all__ = ["ChronicaStore"]

_SEPARATOR = "."  # LangGraph forbids it in a label
# A filter key, as LangGraph's SQL stores take them: a dotted path into the value.
_FILTER_KEY = re.compile(r"^[a-zA-Z0-9_.-]+$")


def _at(value: Any, path: str) -> Any:
    """The part of ``value`` at the dotted ``path`` (``None`` where there is none)."""
    for part in path.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def _matches(value: Any, wanted: Any) -> bool:
    """``value`` passes the filter ``wanted`` (LangGraph's filter language: a value to
    equal, a dict of operators ``$eq $ne $gt $gte $lt $lte``, or a nested dict)."""
    if isinstance(wanted, dict):
        if any(k.startswith("$") for k in wanted):
            return all(_compare(value, op, operand) for op, operand in wanted.items())
        return isinstance(value, dict) and all(_matches(value.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, (list, tuple)):
        return (
            isinstance(value, (list, tuple))
            and len(value) == len(wanted)
            and all(_matches(v, w) for v, w in zip(value, wanted, strict=True))
        )
    return bool(value == wanted)


def _compare(value: Any, operator: str, operand: Any) -> bool:
    if operator == "$eq":
        return bool(value == operand)
    if operator == "$ne":
        return bool(value != operand)
    if operator in ("$gt", "$gte", "$lt", "$lte"):
        try:
            left, right = float(value), float(operand)
        except (TypeError, ValueError):
            return False
        return {
            "$gt": left > right,
            "$gte": left >= right,
            "$lt": left < right,
            "$lte": left <= right,
        }[operator]
    raise ValueError(f"Unsupported filter operator: {operator!r}")


def _namespace_matches(condition: Any, namespace: tuple[str, ...]) -> bool:
    """``namespace`` matches a ``MatchCondition`` (a prefix or a suffix, ``*`` any label)."""
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        pairs = zip(namespace, path, strict=False)
    elif condition.match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    else:
        raise ValueError(f"Unsupported match type: {condition.match_type!r}")
    return all(p == "*" or n == p for n, p in pairs)


def _check_filter(filter_: dict[str, Any]) -> None:
    for key in filter_:
        if not isinstance(key, str) or not _FILTER_KEY.match(key):
            raise ValueError(
                f"Invalid filter key: {key!r}. Filter keys must contain only alphanumeric"
                " characters, underscores, dots, and hyphens."
            )


def _joined(namespace: tuple[str, ...]) -> str:
    return _SEPARATOR.join(namespace)


def _split(namespace: str) -> tuple[str, ...]:
    return tuple(namespace.split(_SEPARATOR))


class ChronicaStore(BaseStore):
    """A LangGraph store of ``owner_id``'s long-term memory (see the module's docstring).

    ``ttl``: LangGraph's ``TTLConfig`` (``default_ttl`` in minutes,
    ``refresh_on_read``)."""

    supports_ttl = True

    def __init__(self, owner_id: str, *, ttl: TTLConfig | None = None) -> None:
        if not isinstance(owner_id, str) or not owner_id:
            raise EmptyOwnerID("ChronicaStore needs an owner: ChronicaStore(owner_id)")
        self.owner_id = owner_id
        self.ttl_config = ttl

    def __repr__(self) -> str:
        return f"<ChronicaStore owner_id={self.owner_id!r}>"

    def _items(self, rows: Rows, now: dt.datetime) -> Any:
        return rows.objects(LangGraphItem).filter(
            Q(expires_at__isnull=True) | Q(expires_at__gt=now), owner_id=self.owner_id
        )

    @closes_its_connection
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        for op in ops:
            validate_op_namespace(op)
            if isinstance(op, SearchOp) and op.filter:
                _check_filter(op.filter)
        rows = Rows()

        def run() -> list[Result]:
            now = dt.datetime.now(dt.UTC)
            results: list[Result] = []
            puts: dict[tuple[tuple[str, ...], str], PutOp] = {}
            for op in ops:
                if isinstance(op, GetOp):
                    results.append(self._get(rows, now, op))
                elif isinstance(op, SearchOp):
                    results.append(self._search(rows, now, op))
                elif isinstance(op, ListNamespacesOp):
                    results.append(self._namespaces(rows, now, op))
                elif isinstance(op, PutOp):
                    puts[(op.namespace, op.key)] = op
                    results.append(None)
                else:
                    raise ValueError(f"Unknown operation type: {type(op)}")
            for op in puts.values():
                self._put(rows, now, op)
            return results

        return rows.in_transaction(run)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await in_sync_thread(self.batch)(list(ops))

    # -- the operations ---------------------------------------------------------------

    @staticmethod
    def _item(row: LangGraphItem) -> Item:
        return Item(
            value=row.value,
            key=row.key,
            namespace=_split(row.namespace),
            created_at=row.created_at,
            updated_at=row.updated_at,
        )

    def _refresh(self, rows: Rows, now: dt.datetime, found: list[LangGraphItem]) -> None:
        for row in found:
            if row.ttl_minutes is not None:
                row.expires_at = now + dt.timedelta(minutes=row.ttl_minutes)
                rows.objects(LangGraphItem).filter(pk=row.pk).update(expires_at=row.expires_at)

    def _get(self, rows: Rows, now: dt.datetime, op: GetOp) -> Item | None:
        row = self._items(rows, now).filter(namespace=_joined(op.namespace), key=op.key).first()
        if row is None:
            return None
        if op.refresh_ttl:
            self._refresh(rows, now, [row])
        return self._item(row)

    def _search(self, rows: Rows, now: dt.datetime, op: SearchOp) -> list[SearchItem]:
        found = self._items(rows, now)
        if op.namespace_prefix:
            prefix = _joined(op.namespace_prefix)
            found = found.filter(Q(namespace=prefix) | Q(namespace__startswith=prefix + _SEPARATOR))
        found = found.order_by("-updated_at", "namespace", "key")
        if not op.filter:
            chosen = list(found[op.offset : op.offset + op.limit])
        else:
            matching = (
                row
                for row in found.iterator(chunk_size=500)
                if isinstance(row.value, dict)
                and all(_matches(_at(row.value, k), v) for k, v in op.filter.items())
            )
            chosen = []
            for i, row in enumerate(matching):
                if i >= op.offset + op.limit:
                    break
                if i >= op.offset:
                    chosen.append(row)
        if op.refresh_ttl:
            self._refresh(rows, now, chosen)
        return [
            SearchItem(
                namespace=_split(row.namespace),
                key=row.key,
                value=row.value,
                created_at=row.created_at,
                updated_at=row.updated_at,
            )
            for row in chosen
        ]

    def _namespaces(self, rows: Rows, now: dt.datetime, op: ListNamespacesOp) -> list[Any]:
        names = [
            _split(n) for n in self._items(rows, now).values_list("namespace", flat=True).distinct()
        ]
        if op.match_conditions:
            names = [n for n in names if all(_namespace_matches(c, n) for c in op.match_conditions)]
        if op.max_depth is not None:
            names = sorted({n[: op.max_depth] for n in names})
        else:
            names = sorted(set(names))
        return names[op.offset : op.offset + op.limit]

    def _put(self, rows: Rows, now: dt.datetime, op: PutOp) -> None:
        items = rows.objects(LangGraphItem).filter(
            owner_id=self.owner_id, namespace=_joined(op.namespace), key=op.key
        )
        if op.value is None:
            items.delete()
            return
        ttl = op.ttl
        expires = None if ttl is None else now + dt.timedelta(minutes=ttl)
        updated = items.update(value=op.value, updated_at=now, expires_at=expires, ttl_minutes=ttl)
        if not updated:
            rows.objects(LangGraphItem).create(
                owner_id=self.owner_id,
                namespace=_joined(op.namespace),
                key=op.key,
                value=op.value,
                created_at=now,
                updated_at=now,
                expires_at=expires,
                ttl_minutes=ttl,
            )

    @closes_its_connection
    def sweep_ttl(self) -> int:
        """Delete the owner's expired items; how many."""
        deleted, _ = (
            Rows()
            .objects(LangGraphItem)
            .filter(owner_id=self.owner_id, expires_at__lte=dt.datetime.now(dt.UTC))
            .delete()
        )
        return int(deleted)
