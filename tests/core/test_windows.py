"""Context windows a model can take: token budgets, whole tool calls, paging back."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest
from django.db import connection
from django.test import override_settings
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chronica import Actum, ActumKind, ChronicumNotFound, InvalidQuery, services
from chronica.services import Chronicarius
from chronica.stores.db import DjangoStore
from chronica.stores.db.dialects import dialect_of
from chronica.stores.db.rows import Streamed
from chronica.stores.memory import InMemoryStore
from chronica.tokens import estimate_tokens
from chronica.values import ActaPage, ActaQuery

from .. import scenario
from ..scenario import CHRONICUM, OWNER, A, H, M, T
from ..teststores import PlainStore
from .test_chronicarius import record_dinner

REQ, RES = ActumKind.TOOL_REQUEST, ActumKind.TOOL_RESPONSE


def by_length(actum: Actum) -> int:
    """A counter a test can reason about: one token a character of content."""
    return len(actum.content)


@pytest.fixture
def counted(store):
    """A Chronicarius whose tokens are characters, on both stores."""
    return Chronicarius(store, token_counter=by_length)


def tool_turn(call_id: str, answer: str = "Rumah Teduh") -> list[Actum]:
    return [
        Actum(chronicum_id=CHRONICUM, kind=REQ, actor_kind=A, actor="search", content="search()",
              call_id=call_id),
        Actum(chronicum_id=CHRONICUM, kind=RES, actor_kind=A, actor="search", content=answer,
              call_id=call_id),
    ]  # fmt: skip


def contents(acta: list[Actum]) -> list[str]:
    return [a.content for a in acta]


class TestBudgets:
    def test_the_newest_acta_that_fit(self, counted):
        for text in ["aaaa", "bbb", "cc", "d"]:
            counted.record_actum(OWNER, scenario.booking_reply(text))
        window = lambda **kw: contents(counted.get_acta(OWNER, CHRONICUM, **kw))  # noqa: E731
        assert window(max_tokens=0) == []
        assert window(max_tokens=1) == ["d"]
        assert window(max_tokens=5) == ["cc", "d"]
        assert window(max_tokens=6) == ["bbb", "cc", "d"]
        assert window(max_tokens=9) == ["bbb", "cc", "d"]
        assert window(max_tokens=10) == ["aaaa", "bbb", "cc", "d"]
        assert window(max_tokens=None) == ["aaaa", "bbb", "cc", "d"]
        assert window(max_tokens=10, last_n=2) == ["cc", "d"]

    def test_an_actum_alone_over_the_budget_ends_the_window(self, counted):
        for text in ["a", "b", "a very long tool result", "c"]:
            counted.record_actum(OWNER, scenario.booking_reply(text))
        assert contents(counted.get_acta(OWNER, CHRONICUM, max_tokens=5)) == ["c"]

    def test_the_count_is_the_one_taken_when_recorded(self, store):
        Chronicarius(store, token_counter=lambda a: 100).record_actum(
            OWNER, scenario.booking_reply("x")
        )
        later = Chronicarius(store, token_counter=lambda a: 1)
        assert later.get_acta(OWNER, CHRONICUM, max_tokens=99) == []
        assert len(later.get_acta(OWNER, CHRONICUM, max_tokens=100)) == 1

    @pytest.mark.parametrize("budget", [-1, "8000", 8000.0, True])
    def test_a_bad_budget_is_invalid_query(self, counted, budget):
        counted.record_actum(OWNER, scenario.booking_reply())
        with pytest.raises(InvalidQuery, match="max_tokens"):
            counted.get_acta(OWNER, CHRONICUM, max_tokens=budget)

    def test_a_counter_that_returns_no_count_is_a_type_error(self, store):
        c = Chronicarius(store, token_counter=lambda a: -1)
        with pytest.raises(TypeError, match="token counter returned -1"):
            c.record_actum(OWNER, scenario.booking_reply())
        with pytest.raises(ChronicumNotFound):
            c.get_chronicum(OWNER, CHRONICUM)

    def test_the_default_estimate(self):
        reply = scenario.booking_reply("Rumah Teduh.")  # 12 bytes: 4 + ceil(12 / 3.5)
        assert estimate_tokens(reply) == 8
        assert estimate_tokens(dataclasses.replace(reply, content="🍽")) == 6  # 4 bytes
        item = {"type": "message", "content": "Rumah Teduh."}
        with_data = dataclasses.replace(reply, data=item)
        size = len(json.dumps(item, separators=(",", ":")))
        assert estimate_tokens(with_data) == 4 + math.ceil(size / 3.5)


class TestWholeToolCalls:
    def test_a_result_whose_call_was_cut_off_is_left_out(self, chronicarius):
        chronicarius.record_acta(OWNER, [*tool_turn("call-1"), *tool_turn("call-2", "Kayu Manis")])
        assert contents(chronicarius.get_acta(OWNER, CHRONICUM, last_n=3)) == [
            "Rumah Teduh",
            "search()",
            "Kayu Manis",
        ]
        whole = chronicarius.get_acta(OWNER, CHRONICUM, last_n=3, whole_tool_calls=True)
        assert [(a.kind, a.call_id) for a in whole] == [(REQ, "call-2"), (RES, "call-2")]

    def test_after_a_filter_and_a_budget(self, counted):
        counted.record_acta(OWNER, [*tool_turn("call-1"), *tool_turn("call-2", "Kayu Manis")])
        only_results = counted.get_acta(OWNER, CHRONICUM, kinds=[RES], whole_tool_calls=True)
        assert only_results == []
        budgeted = counted.get_acta(OWNER, CHRONICUM, max_tokens=18, whole_tool_calls=True)
        assert contents(budgeted) == ["search()", "Kayu Manis"]

    def test_a_result_with_no_call_id_is_kept(self, chronicarius):
        chronicarius.record_actum(OWNER, dataclasses.replace(tool_turn("")[1], call_id=""))
        assert len(chronicarius.get_acta(OWNER, CHRONICUM, whole_tool_calls=True)) == 1

    def test_every_result_of_a_call_stays_with_it(self, chronicarius):
        request, result = tool_turn("call-1")
        chronicarius.record_acta(OWNER, [request, result, dataclasses.replace(result, content="2")])
        whole = chronicarius.get_acta(OWNER, CHRONICUM, last_n=2, whole_tool_calls=True)
        assert whole == []
        assert len(chronicarius.get_acta(OWNER, CHRONICUM, whole_tool_calls=True)) == 3

    @pytest.mark.parametrize("value", ["true", 1, None])
    def test_not_a_bool_is_invalid_query(self, chronicarius, value):
        record_dinner(chronicarius)
        with pytest.raises(InvalidQuery, match="whole_tool_calls"):
            chronicarius.get_acta(OWNER, CHRONICUM, whole_tool_calls=value)


class TestBefore:
    def test_paging_back_through_a_session(self, chronicarius):
        stored = chronicarius.record_acta(
            OWNER, [scenario.booking_reply(f"r{n}") for n in range(23)]
        )
        pages, before = [], None
        while page := chronicarius.get_acta(OWNER, CHRONICUM, last_n=5, before=before):
            pages.append(page)
            before = page[0].id
        assert [len(p) for p in pages] == [5, 5, 5, 5, 3]
        assert [a for page in reversed(pages) for a in page] == stored

    def test_an_unknown_actum_is_invalid_query(self, chronicarius):
        record_dinner(chronicarius)
        other = chronicarius.record_actum(OWNER, scenario.booking_reply(chronicum_id="other"))
        for before in ("no-such-actum", other.id, "actum\x00", "\ud800", "x" * 256):
            with pytest.raises(InvalidQuery, match="before"):
                chronicarius.get_acta(OWNER, CHRONICUM, before=before)

    def test_someone_elses_chronicum_is_not_found_first(self, chronicarius):
        stored = record_dinner(chronicarius)
        with pytest.raises(ChronicumNotFound):
            chronicarius.get_acta("rafa", CHRONICUM, before=stored[3].id)


class TestPages:
    """``get_acta_page``: the window of ``get_acta`` and where the next, older page starts,
    from one read (the API's paging)."""

    def test_walking_the_pages_reads_every_actum_once(self, chronicarius):
        stored = chronicarius.record_acta(
            OWNER, [scenario.booking_reply(f"r{n}") for n in range(23)]
        )
        pages, before = [], None
        while True:
            page = chronicarius.get_acta_page(OWNER, CHRONICUM, last_n=5, before=before)
            assert page.acta == chronicarius.get_acta(OWNER, CHRONICUM, last_n=5, before=before)
            pages.append(page.acta)
            if page.next_before is None:
                break
            assert page.next_before == page.acta[0].id
            before = page.next_before
        assert [len(p) for p in pages] == [5, 5, 5, 5, 3]
        assert [a for page in reversed(pages) for a in page] == stored

    def test_a_whole_window_has_no_next_page(self, chronicarius):
        stored = record_dinner(chronicarius)
        assert chronicarius.get_acta_page(OWNER, CHRONICUM) == ActaPage(stored, None)
        assert chronicarius.get_acta_page(OWNER, CHRONICUM, last_n=len(stored)).next_before is None

    def test_only_acta_that_pass_the_filters_make_a_next_page(self, chronicarius):
        chronicarius.record_acta(
            OWNER, [scenario.booking_reply("Rumah Teduh?"), *tool_turn("call-1")]
        )
        page = chronicarius.get_acta_page(OWNER, CHRONICUM, kinds=[RES, REQ], last_n=2)
        assert (len(page.acta), page.next_before) == (2, None)

    def test_a_budget_that_cuts_the_page_short_leaves_a_next_page(self, counted):
        stored = counted.record_acta(
            OWNER, [scenario.booking_reply(t) for t in ["aaaa", "bbb", "cc", "d"]]
        )
        page = counted.get_acta_page(OWNER, CHRONICUM, max_tokens=3)
        assert (contents(page.acta), page.next_before) == (["cc", "d"], stored[2].id)
        page = counted.get_acta_page(OWNER, CHRONICUM, max_tokens=3, before=page.next_before)
        assert (contents(page.acta), page.next_before) == (["bbb"], stored[1].id)
        # An actum alone over the budget ends the walk: an empty page has no next.
        page = counted.get_acta_page(OWNER, CHRONICUM, max_tokens=3, before=page.next_before)
        assert page == ActaPage([], None)

    def test_with_whole_tool_calls_the_next_page_starts_at_the_oldest_kept(self, chronicarius):
        stored = chronicarius.record_acta(
            OWNER, [scenario.booking_reply("Rumah Teduh?"), *tool_turn("call-1")]
        )
        page = chronicarius.get_acta_page(OWNER, CHRONICUM, last_n=1, whole_tool_calls=True)
        # The response's request is on the next page: this one holds nothing of it.
        assert page == ActaPage([], stored[2].id)

    def test_the_same_answers_as_get_acta(self, chronicarius):
        stored = record_dinner(chronicarius)
        with pytest.raises(ChronicumNotFound):
            chronicarius.get_acta_page("rafa", CHRONICUM)
        with pytest.raises(ChronicumNotFound):
            chronicarius.get_acta_page(OWNER, "never-used")
        for bad in ({"before": "nope"}, {"max_tokens": -1}, {"kinds": ["gossip"]}):
            with pytest.raises(InvalidQuery):
                chronicarius.get_acta_page(OWNER, CHRONICUM, **bad)
        with pytest.raises(InvalidQuery, match="whole_tool_calls"):
            chronicarius.get_acta_page(OWNER, CHRONICUM, whole_tool_calls="yes")
        assert chronicarius.get_acta_page(OWNER, CHRONICUM, before=stored[0].id) == ActaPage([])

    async def test_the_async_twin(self, chronicarius):
        stored = await chronicarius.arecord_acta(
            OWNER, [scenario.booking_reply(f"r{n}") for n in range(3)]
        )
        page = await chronicarius.aget_acta_page(OWNER, CHRONICUM, last_n=2)
        assert page == ActaPage(stored[1:], stored[1].id)


class TestPagesOnASeedStore:
    """A store of the seed's four methods: one read of its acta, cut here, so that no
    write, pop or delete between two reads can make a page point at an actum that is
    gone."""

    def test_pages_as_a_windowing_store_gives_them(self):
        c = Chronicarius(PlainStore(), token_counter=by_length)
        stored = [c.record_actum(OWNER, scenario.booking_reply(t)) for t in ["aaa", "bb", "c"]]
        assert c.get_acta_page(OWNER, CHRONICUM, max_tokens=3) == ActaPage(stored[1:], stored[1].id)
        assert c.get_acta_page(OWNER, CHRONICUM, last_n=2) == ActaPage(stored[1:], stored[1].id)
        assert c.get_acta_page(OWNER, CHRONICUM, last_n=3) == ActaPage(stored, None)


class TestPlainStoreFallback:
    """A store that cannot cut a window itself: Chronicarius reads the chronicum and cuts it,
    counting tokens at read time."""

    def test_budget_and_before_on_a_plain_store(self):
        store = PlainStore()
        c = Chronicarius(store, token_counter=by_length)
        stored = [c.record_actum(OWNER, scenario.booking_reply(t)) for t in ["aaa", "bb", "c"]]
        assert contents(c.get_acta(OWNER, CHRONICUM, max_tokens=3)) == ["bb", "c"]
        assert contents(c.get_acta(OWNER, CHRONICUM, before=stored[2].id, last_n=1)) == ["bb"]
        with pytest.raises(InvalidQuery):
            c.get_acta(OWNER, CHRONICUM, before="nope")
        store.calls.clear()
        c.get_acta(OWNER, CHRONICUM, last_n=1)
        assert store.calls == ["get", "acta"]


class TestSettings:
    def test_token_counter_from_settings(self, db):
        with override_settings(CHRONICA={"TOKEN_COUNTER": f"{__name__}.by_length"}):
            services.record_actum(OWNER, scenario.booking_reply("four"))
            services.record_actum(OWNER, scenario.booking_reply("22"))
            assert contents(services.get_acta(OWNER, CHRONICUM, max_tokens=5)) == ["22"]

    async def test_async_twin_takes_the_options(self):
        with override_settings(CHRONICA={"STORE": "chronica.stores.memory.InMemoryStore"}):
            await services.arecord_acta(OWNER, tool_turn("call-1"))
            window = await services.aget_acta(
                OWNER, CHRONICUM, last_n=1, whole_tool_calls=True, max_tokens=1000
            )
            assert window == []


# -- a model of the window, checked against both stores ---------------------------


def model(acta, counts, *, kinds, actor_kinds, last_n, max_tokens, whole, before, max_bytes=None):
    """The rules as a reader states them, independently of chronica.windows; ``max_bytes``
    (``get_acta_page``'s): the UTF-8 bytes of content, newest first, the newest always."""
    if before is not None:
        acta = acta[: [a.id for a in acta].index(before)]
    passing = [
        (a, n)
        for a, n in zip(acta, counts, strict=False)
        if (not kinds or a.kind in kinds) and (not actor_kinds or a.actor_kind in actor_kinds)
    ]
    window, spent, weight = [], 0, 0
    for actum, n in reversed(passing):
        if last_n > 0 and len(window) == last_n:
            break
        if max_tokens is not None and spent + n > max_tokens:
            break
        size = len(actum.content.encode())
        if max_bytes is not None and window and weight + size > max_bytes:
            break
        spent, weight = spent + n, weight + size
        window.insert(0, actum)
    if whole:
        calls = {a.call_id for a in window if a.kind == REQ and a.call_id}
        window = [a for a in window if not (a.kind == RES and a.call_id and a.call_id not in calls)]
    return window


def model_page(acta, counts, **q):
    """The page of a window as a reader states it: the window, and the oldest actum it
    kept (before whole tool calls) when an older one passes the filters."""
    whole = model(acta, counts, **q)
    q = {**q, "whole": False}
    window = model(acta, counts, **q)
    older = acta[: acta.index(window[0])] if window else []
    passing = model(
        older, counts, **{**q, "last_n": 1, "max_tokens": None, "before": None, "max_bytes": None}
    )
    return ActaPage(whole, window[0].id if window and passing else None)


session_acta = st.lists(
    st.tuples(
        st.sampled_from([M, T, REQ, RES]),
        st.sampled_from([H, A, "system"]),
        st.sampled_from(["", "c1", "c2", "c3"]),
        st.integers(0, 12),
    ),
    min_size=0,
    max_size=25,
)
queries = st.fixed_dictionaries(
    {
        "kinds": st.sets(st.sampled_from([M, T, REQ, RES]), max_size=2),
        "actor_kinds": st.sets(st.sampled_from([H, A]), max_size=1),
        "last_n": st.integers(-1, 8),
        "max_tokens": st.one_of(st.none(), st.integers(0, 60)),
        "whole": st.booleans(),
        "before": st.one_of(st.none(), st.integers(0, 30)),
        "max_bytes": st.one_of(st.none(), st.integers(1, 40)),
    }
)


def check_model(c: Chronicarius, chronicum_id: str, rows, many) -> None:
    sent = [
        Actum(
            chronicum_id=chronicum_id,
            kind=kind,
            actor_kind=actor_kind,
            actor="x",
            content="c" * size or ("" if kind in (REQ, RES) else "t"),
            call_id=call_id if kind in (REQ, RES) else "",
        )
        for kind, actor_kind, call_id, size in rows
    ]
    c.create_chronicum(OWNER, chronicum_id)
    if getattr(c.store, "supports_append", False):
        stored = c.record_acta(OWNER, sent)
    else:
        stored = [c.record_actum(OWNER, actum) for actum in sent]
    counts = [len(a.content) for a in stored]
    for q in many:
        before = None
        if q["before"] is not None and stored:
            before = stored[q["before"] % len(stored)].id
        window = {
            "kinds": q["kinds"],
            "actor_kinds": q["actor_kinds"],
            "last_n": q["last_n"],
            "max_tokens": q["max_tokens"],
            "whole_tool_calls": q["whole"],
            "before": before,
        }
        got = c.get_acta(OWNER, chronicum_id, **window)
        want = model(stored, counts, **{**q, "before": before, "max_bytes": None})
        assert got == want, q
        page = c.get_acta_page(OWNER, chronicum_id, **window, max_bytes=q["max_bytes"])
        assert page == model_page(stored, counts, **{**q, "before": before}), q


MODEL_SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@MODEL_SETTINGS
@given(rows=session_acta, many=st.lists(queries, min_size=1, max_size=8))
def test_the_window_model_agrees_with_in_memory_store(rows, many):
    check_model(Chronicarius(InMemoryStore(), token_counter=by_length), "w", rows, many)


@pytest.mark.django_db(transaction=True)
@MODEL_SETTINGS
@given(rows=session_acta, many=st.lists(queries, min_size=1, max_size=8))
def test_the_window_model_agrees_with_django_store(rows, many):
    import uuid

    c = Chronicarius(DjangoStore(), token_counter=by_length)
    check_model(c, f"w-{uuid.uuid4().hex}", rows, many)


@MODEL_SETTINGS
@given(rows=session_acta, many=st.lists(queries, min_size=1, max_size=8))
def test_the_window_model_agrees_with_the_plain_store_fallback(rows, many):
    check_model(Chronicarius(PlainStore(), token_counter=by_length), "w", rows, many)


# -- PostgreSQL keeps the window on the (chronicum_id, seq) index ------------------


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "query",
    [
        ActaQuery(last_n=20),
        ActaQuery(kinds=frozenset({M}), last_n=20),
        ActaQuery(last_n=20, before="some-actum"),
        ActaQuery(max_tokens=8000),
        ActaQuery(max_tokens=8000, last_n=50, kinds=frozenset({M, T})),
        ActaQuery(last_n=1000, max_bytes=8 * 1024 * 1024),
        ActaQuery(last_n=50, max_bytes=4096, max_tokens=8000),
    ],
    ids=["last_n", "filtered", "before", "budget", "budget-filtered", "bytes", "both-budgets"],
)
def test_the_window_plan_stays_on_the_chronicum_seq_index(query):
    if connection.vendor != "postgresql":
        pytest.skip("EXPLAIN of PostgreSQL's plan: this run is on SQLite")
    with connection.cursor() as cursor:
        # Many acta of other chronica after this one's: the planner's temptation is to walk
        # the primary key backwards and filter, which reads every one of them.
        cursor.execute(
            "INSERT INTO chronica (id, owner_id, started_at, last_activity_at)"
            " SELECT 'plan-' || g, 'ardian', now(), now() FROM generate_series(1, 2) g"
        )
        cursor.execute(
            "INSERT INTO acta (id, chronicum_id, kind, actor_kind, actor, content, at)"
            " SELECT md5(g::text), 'plan-' || (1 + (g > 20000)::int), 'message', 'human',"
            " 'ardian', 'x', now() FROM generate_series(1, 60000) g"
        )
        cursor.execute("ANALYZE acta")
        (sql, params), _page = dialect_of(connection).window(OWNER, "plan-1", query)
        cursor.execute("EXPLAIN (FORMAT JSON) " + sql, params)
        plan = json.dumps(cursor.fetchone()[0])
    assert "acta_chronicum_seq" in plan
    assert '"Index Name": "acta_pkey"' not in plan or '"Node Type": "Index Scan"' in plan
    scans = [
        node
        for node in _nodes(json.loads(plan)[0]["Plan"])
        if node.get("Relation Name") == "acta" and node["Node Type"] == "Seq Scan"
    ]
    assert scans == [], "the window reads acta with a sequential scan"
    backwards_on_pkey = [
        node
        for node in _nodes(json.loads(plan)[0]["Plan"])
        if node.get("Index Name") == "acta_pkey" and node.get("Scan Direction") == "Backward"
    ]
    assert backwards_on_pkey == [], "the window walks the primary key backwards"
    # The owner's check runs once, in front of the scan (an InitPlan), not once a row.
    per_row = [
        node
        for node in _nodes(json.loads(plan)[0]["Plan"])
        if node.get("Relation Name") == "chronica" and node.get("Parent Relationship") == "SubPlan"
    ]
    assert per_row == [], "the owner's check runs once a row"


def _nodes(plan):
    yield plan
    for child in plan.get("Plans", []):
        yield from _nodes(child)


@pytest.mark.django_db
@pytest.mark.parametrize("last_n", [2**31 - 1, 2**31, 2**63 - 2, 2**63 - 1, 2**64])
def test_any_last_n_an_int_can_be_is_a_window(last_n):
    """A limit at the edges of the database's integers (the OpenAI Agents SDK asks for
    2**31 - 1 items): never an 'integer out of range'."""
    stored = [services.record_actum(OWNER, actum) for actum in scenario.acta()]
    assert services.get_acta(OWNER, CHRONICUM, last_n=last_n) == stored
    page = services.get_acta_page(OWNER, CHRONICUM, last_n=last_n, max_bytes=10**6)
    assert page.acta == stored
    assert services.get_acta(OWNER, CHRONICUM, last_n=last_n, max_tokens=10**9) == stored


@pytest.mark.django_db
@pytest.mark.parametrize(
    "last_n", [5, 40, 0, 10**6], ids=["under", "over-the-budget", "no-limit", "huge-limit"]
)
def test_a_byte_budget_sends_about_the_budget(last_n):
    """The database sends the acta that fit whole, then at most the limit's rows without
    their content, and never more than one such row where the limit (or none) would let
    a long session send them all: a byte budget bounds what crosses the wire. SQLite
    hands rows over as they are read: there the window reads the chronicum's row, the
    acta that fit and the first that does not, and nothing after it."""
    for n in range(60):
        services.record_actum(OWNER, scenario.booking_reply(f"{n:02d}" + "x" * 98))
    query = ActaQuery(last_n=last_n, max_bytes=250)
    (text, params), page = dialect_of(connection).window(OWNER, CHRONICUM, query)
    with connection.cursor() as cursor:
        cursor.execute(text, params)
        if isinstance(page, Streamed):
            read: list[tuple] = []
            acta, more = page(read.append(row) or row for row in cursor)
            assert [a.content[:2] for a in acta] == ["58", "59"]
            assert more
            # (the chronicum's row, then the acta newest first: two fit, the third not)
            assert [row[0] for row in read] == [1, None, None, None]
            assert [row[3 + 4][:2] for row in read[1:]] == ["59", "58", "57"]
            return
        rows = cursor.fetchall()
    whole = [row for row in rows if row[3 + 4] is not None]  # (found, before, fits, id, ...)
    assert [row[3 + 4][:2] for row in whole] == ["59", "58"][: min(last_n or 2, 2)]
    assert len(rows) <= max(last_n + 1, 3) if 0 < last_n <= 1000 else len(rows) == 3
    acta, more = page(rows)
    assert [a.content[:2] for a in acta] == ["58", "59"][-min(last_n or 2, 2) :]
    assert more


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("argument", "value"),
    [
        ("max_bytes", 0),
        ("max_bytes", -1),
        ("max_bytes", True),
        ("max_bytes", 1.5),
        ("max_bytes", "4096"),
        ("raw_data", 1),
        ("raw_data", "yes"),
        ("raw_data", None),
    ],
)
def test_a_bad_byte_budget_or_raw_data_is_invalid(argument, value):
    """``max_bytes`` is None or a positive int, ``raw_data`` True or False: anything
    else is an ``InvalidQuery`` naming it, before any read."""
    services.record_actum(OWNER, scenario.booking_reply("a table for two"))
    with pytest.raises(InvalidQuery, match=f"^{argument} must be"):
        services.get_acta_page(OWNER, CHRONICUM, **{argument: value})


@pytest.mark.django_db
@pytest.mark.parametrize("chronicum", [CHRONICUM, "empty", "missing", "anothers"])
@pytest.mark.parametrize(
    "query",
    [
        ActaQuery(last_n=5, max_bytes=250),
        ActaQuery(max_bytes=10**6),
        ActaQuery(last_n=3),
    ],
    ids=["bytes", "bytes-no-limit", "plain"],
)
def test_a_window_embedded_in_a_statement_is_the_same_page(chronicum, query):
    """A statement may embed a dialect's window (as the state's read does: LEFT JOINed,
    its rows sorted by seq, newest first): what turns the rows into the page gives the
    page the store's window gives, and None for a chronicum that is not the owner's."""
    for n in range(12):
        services.record_actum(OWNER, scenario.booking_reply(f"{n:02d}" + "x" * 98))
    services.create_chronicum(OWNER, "empty")
    services.create_chronicum("someone-else", "anothers")
    dialect = dialect_of(connection)
    (window, params), page = dialect.window(OWNER, chronicum, query)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT w.* FROM (SELECT 1 AS one) s LEFT JOIN ({window}) w ON 1 = 1"
            " ORDER BY w.w_seq DESC",
            params,
        )
        embedded = page(cursor.fetchall())
    stored = DjangoStore().window(OWNER, chronicum, query)
    assert embedded == stored
    assert (stored is None) == (chronicum in ("missing", "anothers"))
    if chronicum == CHRONICUM:  # (a page that is cut, by the limit or the budget, and one not)
        assert stored is not None
        assert stored[0]
        assert stored[1] == (query.max_bytes != 10**6)
