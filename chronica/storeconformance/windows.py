"""The cases of ``window``: a page of the context window, owner-checked, with every
field of ``ActaQuery``, and whether an older page exists."""

from __future__ import annotations

import json
from typing import Any

from ..errors import InvalidQuery
from ..validation.jsondata import RawJSON
from ..values import ActaQuery, Actum
from ..windows import size
from .base import M, T, _Base, _expect, _expect_raises


class WindowConformance(_Base):
    """The cases every store with ``supports_window`` must pass."""

    ability = "window"

    def page(self, store: Any, cid: str, **query: Any) -> tuple[list[str], bool]:
        acta, more = self.read(store, cid, **query)
        return [a.content for a in acta], more

    def contents(self, store: Any, cid: str, **query: Any) -> list[str]:
        return [a.content for a in self.read(store, cid, **query)[0]]

    def read(self, store: Any, cid: str, **query: Any) -> tuple[list[Actum], bool]:
        found = store.window("ardian", cid, ActaQuery(**query))
        _expect(found is not None, f"window of ardian's chronicum: {found!r}")
        return found  # type: ignore[no-any-return]

    def test_before_pages_back(self) -> None:
        store = self.make_store()
        cid, acta = self.dinner(store)
        got = self.contents(store, cid, before=acta[4].id)
        _expect(got == ["a0", "a1", "a2", "a3"], f"before a4: {got}")
        got = self.contents(store, cid, before=acta[4].id, last_n=2)
        _expect(got == ["a2", "a3"], f"before a4, last 2: {got}")
        got = self.contents(store, cid, before=acta[5].id, kinds=frozenset({M}), last_n=1)
        _expect(got == ["a4"], f"before a5, last message: {got}")
        got = self.contents(store, cid, before=acta[0].id)
        _expect(got == [], f"before the first actum: {got}")
        # An actum the filters leave out still marks the place.
        got = self.contents(store, cid, before=acta[3].id, kinds=frozenset({M}))
        _expect(got == ["a0", "a2"], f"before a thought, messages only: {got}")

    def test_before_an_unknown_actum_is_invalid_query(self) -> None:
        store = self.make_store()
        cid, _ = self.dinner(store)
        _, other_acta = self.dinner(store)
        for before in ("no-such-actum", other_acta[2].id):
            _expect_raises(
                InvalidQuery,
                lambda before=before: store.window(  # type: ignore[misc]
                    "ardian", cid, ActaQuery(before=before)
                ),
                f"before={before!r}",
            )

    def test_max_tokens_keeps_the_newest_that_fit(self) -> None:
        store = self.make_store()
        cid, _ = self.dinner(store)
        for budget, want in [
            (0, []),
            (59, []),  # the newest alone does not fit: the window is empty
            (60, ["a5"]),
            (109, ["a5"]),
            (110, ["a4", "a5"]),
            (210, ["a0", "a1", "a2", "a3", "a4", "a5"]),
            (10**12, ["a0", "a1", "a2", "a3", "a4", "a5"]),
        ]:
            got = self.contents(store, cid, max_tokens=budget)
            _expect(got == want, f"max_tokens={budget}: {got}, want {want}")

    def test_max_tokens_counts_only_what_passes_the_filters(self) -> None:
        store = self.make_store()
        cid, acta = self.dinner(store)
        messages = frozenset({M})
        got = self.contents(store, cid, kinds=messages, max_tokens=80)
        _expect(got == ["a2", "a4"], f"messages in 80 tokens: {got}")
        got = self.contents(store, cid, kinds=messages, max_tokens=80, last_n=1)
        _expect(got == ["a4"], f"both limits hold: {got}")
        got = self.contents(store, cid, before=acta[5].id, max_tokens=90)
        _expect(got == ["a3", "a4"], f"before a5 in 90 tokens: {got}")

    def test_an_actum_recorded_without_a_count_is_estimated(self) -> None:
        store = self.make_store()
        cid = self.new_chronicum(store).id
        # 4 + ceil(bytes / 3.5): 4 + 4 for "Rumah Teduh" (11 bytes), 4 + 2 for "🍽" (4 bytes).
        store.append("ardian", cid, [self.actum(cid, "Rumah Teduh"), self.actum(cid, "🍽")])
        got = self.contents(store, cid, max_tokens=13)
        _expect(got == ["🍽"], f"within 13 tokens: {got}")
        got = self.contents(store, cid, max_tokens=14)
        _expect(got == ["Rumah Teduh", "🍽"], f"within 14 tokens: {got}")

    def test_more_when_an_older_actum_passes_the_filters(self) -> None:
        store = self.make_store()
        cid, acta = self.dinner(store)
        cases: list[tuple[dict[str, Any], tuple[list[str], bool]]] = [
            ({}, (["a0", "a1", "a2", "a3", "a4", "a5"], False)),
            ({"last_n": 2}, (["a4", "a5"], True)),
            ({"last_n": 6}, (["a0", "a1", "a2", "a3", "a4", "a5"], False)),
            ({"last_n": 2, "kinds": frozenset({M})}, (["a2", "a4"], True)),
            ({"last_n": 3, "kinds": frozenset({M})}, (["a0", "a2", "a4"], False)),
            # a0 is older than the window, and a message: it does not pass.
            ({"last_n": 3, "kinds": frozenset({T})}, (["a1", "a3", "a5"], False)),
            # a1 is older than the window and a thought: it does not pass.
            ({"last_n": 1, "kinds": frozenset({M}), "before": acta[2].id}, (["a0"], False)),
            ({"last_n": 1, "before": acta[2].id}, (["a1"], True)),
            ({"before": acta[0].id}, ([], False)),
        ]
        for query, want in cases:
            got = self.page(store, cid, **query)
            _expect(got == want, f"{query}: {got}, want {want}")

    def test_more_when_the_budget_cut_the_window_short(self) -> None:
        store = self.make_store()
        cid, acta = self.dinner(store)
        cases: list[tuple[dict[str, Any], tuple[list[str], bool]]] = [
            ({"max_tokens": 110}, (["a4", "a5"], True)),
            ({"max_tokens": 210}, (["a0", "a1", "a2", "a3", "a4", "a5"], False)),
            # The newest alone does not fit: an empty window has no older page.
            ({"max_tokens": 59}, ([], False)),
            ({"max_tokens": 80, "kinds": frozenset({M})}, (["a2", "a4"], True)),
            ({"max_tokens": 90, "before": acta[5].id}, (["a3", "a4"], True)),
            ({"max_tokens": 1000, "last_n": 1, "before": acta[1].id}, (["a0"], False)),
        ]
        for query, want in cases:
            got = self.page(store, cid, **query)
            _expect(got == want, f"{query}: {got}, want {want}")

    def test_a_page_of_someone_else_or_a_missing_chronicum_is_none(self) -> None:
        store = self.make_store()
        cid, _ = self.dinner(store)
        for owner, chronicum_id in (("rafa", cid), ("ardian", self.new_id("missing"))):
            got = store.window(owner, chronicum_id, ActaQuery(last_n=1))
            _expect(got is None, f"window({owner!r}, {chronicum_id!r}): {got!r}")
        _expect_raises(
            InvalidQuery,
            lambda: store.window("ardian", cid, ActaQuery(before="no-such-actum")),
            "before an actum that is not there",
        )

    def test_max_bytes_keeps_the_newest_that_fit_and_always_one(self) -> None:
        store = self.make_store()
        cid, acta = self.dinner(store)
        weight = size(acta[5])
        for budget, want in [
            (1, (["a5"], True)),  # the newest always
            (weight * 2, (["a4", "a5"], True)),
            (weight * 2 + 1, (["a4", "a5"], True)),
            (weight * 6, (["a0", "a1", "a2", "a3", "a4", "a5"], False)),
        ]:
            got = self.page(store, cid, max_bytes=budget)
            _expect(got == want, f"max_bytes={budget}: {got}, want {want}")
        got = self.page(store, cid, max_bytes=weight * 3, last_n=2)
        _expect(got == (["a4", "a5"], True), f"both limits hold: {got}")
        got = self.page(store, cid, max_bytes=weight * 3, max_tokens=60)
        _expect(got == (["a5"], True), f"the byte budget and the token budget: {got}")

    def test_raw_data_is_the_stored_json_text(self) -> None:
        store = self.make_store()
        cid = self.new_chronicum(store).id
        data = {"area": "Kemang", "party": 4, "quiet": True, "places": ["Rumah Teduh"]}
        store.append("ardian", cid, [self.actum(cid, "req", data=data), self.actum(cid, "x")])
        (with_data, without), _more = self.read(store, cid, raw_data=True)
        _expect(isinstance(with_data.data, RawJSON), f"raw data: {with_data.data!r}")
        text = with_data.data.text
        _expect(json.loads(text) == data, f"the stored text {text!r}")
        _expect(without.data is None, "no data stays None")
