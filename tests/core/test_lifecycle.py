"""The session lifecycle: create, list, delete and pop, with their races, on both stores."""

from __future__ import annotations

import re
import threading

import pytest
from django.db import DatabaseError

from chronica import (
    ChronicumExists,
    ChronicumNotFound,
    InvalidActum,
    InvalidQuery,
    StoreUnsupported,
)
from chronica.services import Chronicarius
from chronica.signals import chronicum_deleted
from chronica.stores.memory import InMemoryStore
from chronica.values import ChronicaPage

from .. import scenario
from ..scenario import CHRONICUM, OWNER
from ..teststores import PlainStore
from .test_chronicarius import record_dinner, run_threads


def reply(content: str, chronicum_id: str = CHRONICUM):
    return scenario.booking_reply(content, chronicum_id=chronicum_id)


class TestCreate:
    def test_a_new_chronicum_gets_an_unguessable_id(self, chronicarius):
        chronicum = chronicarius.create_chronicum(OWNER)
        assert re.fullmatch(r"[0-9a-f]{32}", chronicum.id)
        assert chronicum.owner_id == OWNER
        assert chronicum.started_at == chronicum.last_activity_at
        assert chronicarius.get_chronicum(OWNER, chronicum.id) == chronicum
        assert chronicarius.get_acta(OWNER, chronicum.id) == []
        assert chronicarius.create_chronicum(OWNER).id != chronicum.id

    def test_a_chosen_id_and_then_the_first_actum(self, chronicarius):
        created = chronicarius.create_chronicum(OWNER, CHRONICUM)
        stored = record_dinner(chronicarius)
        assert chronicarius.get_acta(OWNER, CHRONICUM) == stored
        assert chronicarius.get_chronicum(OWNER, CHRONICUM).started_at == created.started_at

    def test_an_id_taken_by_anyone_is_chronicum_exists(self, chronicarius):
        record_dinner(chronicarius)
        for owner in (OWNER, "rafa"):
            with pytest.raises(ChronicumExists):
                chronicarius.create_chronicum(owner, CHRONICUM)
        assert chronicarius.get_chronicum(OWNER, CHRONICUM).owner_id == OWNER

    @pytest.mark.parametrize("chronicum_id", ["", " ", "..", "dinner\nfriday", "x" * 256, 7])
    def test_an_id_that_cannot_be_stored_is_invalid(self, chronicarius, chronicum_id):
        with pytest.raises(InvalidActum, match="chronicum_id"):
            chronicarius.create_chronicum(OWNER, chronicum_id)

    @pytest.mark.parametrize(("owner", "error"), [("", ValueError), ("ardian\n", InvalidActum)])
    def test_a_bad_owner(self, chronicarius, owner, error):
        with pytest.raises(error):
            chronicarius.create_chronicum(owner)


class TestList:
    def test_latest_activity_first_and_only_the_owners(self, chronicarius):
        mine = [chronicarius.create_chronicum(OWNER, f"dinner-{day}") for day in ("mon", "tue")]
        chronicarius.create_chronicum("rafa", "rafa-lunch")
        chronicarius.record_actum(OWNER, reply("Held.", "dinner-mon"))
        listed = chronicarius.list_chronica(OWNER)
        assert [c.id for c in listed] == ["dinner-mon", "dinner-tue"]
        assert listed[1] == mine[1]
        assert listed[0].last_activity_at > mine[0].last_activity_at
        assert chronicarius.list_chronica("nobody") == []

    def test_pages_with_before_a_chronicum_or_its_id(self, chronicarius):
        ids = [chronicarius.create_chronicum(OWNER, f"dinner-{n:02}").id for n in range(7)]
        newest_first = ids[::-1]
        for position in ("chronicum", "id"):
            seen, before = [], None
            while page := chronicarius.list_chronica(OWNER, limit=3, before=before):
                seen += [c.id for c in page]
                before = page[-1] if position == "chronicum" else page[-1].id
            assert seen == newest_first, position

    @pytest.mark.parametrize("limit", [0, -1, 1001, "10", 2.5, True])
    def test_a_limit_out_of_range_is_invalid_query(self, chronicarius, limit):
        with pytest.raises(InvalidQuery, match="limit"):
            chronicarius.list_chronica(OWNER, limit=limit)

    def test_the_limits_that_are_fine(self, chronicarius):
        chronicarius.create_chronicum(OWNER)
        assert len(chronicarius.list_chronica(OWNER, limit=1)) == 1
        assert len(chronicarius.list_chronica(OWNER, limit=1000)) == 1

    def test_before_someone_elses_or_a_missing_chronicum_is_invalid_query(self, chronicarius):
        chronicarius.create_chronicum("rafa", "rafa-lunch")
        for before in ("rafa-lunch", "never-used", 42):
            with pytest.raises(InvalidQuery, match="before"):
                chronicarius.list_chronica(OWNER, before=before)

    def test_a_plain_store_cannot_list(self):
        with pytest.raises(StoreUnsupported, match="cannot list chronica"):
            Chronicarius(PlainStore()).list_chronica(OWNER)
        with pytest.raises(StoreUnsupported, match="cannot list chronica"):
            Chronicarius(PlainStore()).list_chronica_page(OWNER)


class TestListPage:
    """``list_chronica_page``: the page of ``list_chronica`` and whether more follow it,
    from one read (the store is asked for one chronicum more than the page)."""

    @pytest.mark.parametrize("limit", [1, 2, 3, 6, 7, 1000])
    def test_last_is_the_last_of_a_page_that_more_follow(self, chronicarius, limit):
        ids = [chronicarius.create_chronicum(OWNER, f"dinner-{n:02}").id for n in range(6)]
        chronicarius.create_chronicum("rafa", "rafa-lunch")
        seen, before, pages = [], None, 0
        while True:
            page = chronicarius.list_chronica_page(OWNER, limit=limit, before=before)
            assert page.chronica == chronicarius.list_chronica(OWNER, limit=limit, before=before)
            seen += [c.id for c in page.chronica]
            pages += 1
            if page.last is None:
                break
            assert page.last == page.chronica[-1]
            before = page.last
        assert seen == ids[::-1]
        assert pages == max(1, -(-6 // limit))

    def test_an_owner_with_none_gets_an_empty_last_page(self, chronicarius):
        assert chronicarius.list_chronica_page("nobody") == ChronicaPage([], None)

    def test_the_same_checks_as_list_chronica(self, chronicarius):
        for limit in (0, 1001, True):
            with pytest.raises(InvalidQuery, match="limit"):
                chronicarius.list_chronica_page(OWNER, limit=limit)
        with pytest.raises(InvalidQuery, match="before"):
            chronicarius.list_chronica_page(OWNER, before="never-used")

    def test_one_read_of_the_store(self):
        from chronica.stores.memory import InMemoryStore

        class CountingStore(InMemoryStore):
            reads = 0

            def list_chronica(self, owner_id, limit, after):
                CountingStore.reads += 1
                return super().list_chronica(owner_id, limit, after)

        c = Chronicarius(CountingStore())
        for n in range(3):
            c.create_chronicum(OWNER, f"dinner-{n}")
        assert c.list_chronica_page(OWNER, limit=3).last is None
        page = c.list_chronica_page(OWNER, limit=2)
        assert page.last is not None
        with pytest.warns(DeprecationWarning, match="ChronicaPage.last"):
            assert page.next_before == page.last
        assert CountingStore.reads == 2

    @pytest.mark.slow
    def test_pages_cover_every_chronicum_once_while_other_owners_write(self, chronicarius):
        ids = {chronicarius.create_chronicum(OWNER).id for _ in range(30)}
        for n in range(4):
            chronicarius.create_chronicum(f"other-{n}", f"other-{n}")
        stop = threading.Event()
        writing = threading.Barrier(5)

        def work(i: int):
            if i < 4:
                n = 0
                while n == 0 or not stop.is_set():
                    chronicarius.record_actum(f"other-{i}", reply(f"{n}", f"other-{i}"))
                    if n == 0:
                        writing.wait(timeout=30)
                    n += 1
                return n
            writing.wait(timeout=30)  # every writer is under way
            try:
                seen, before = [], None
                while page := chronicarius.list_chronica(OWNER, limit=7, before=before):
                    seen += [c.id for c in page]
                    before = page[-1]
                return seen
            finally:
                stop.set()

        *writes, seen = run_threads(5, work)
        assert all(isinstance(n, int) and n > 0 for n in writes), writes
        assert sorted(seen) == sorted(ids)


class TestDelete:
    def test_the_chronicum_and_all_its_acta_are_gone(self, chronicarius):
        record_dinner(chronicarius)
        chronicarius.create_chronicum(OWNER, "dinner-saturday")
        chronicarius.delete_chronicum(OWNER, CHRONICUM)
        with pytest.raises(ChronicumNotFound):
            chronicarius.get_chronicum(OWNER, CHRONICUM)
        with pytest.raises(ChronicumNotFound):
            chronicarius.get_acta(OWNER, CHRONICUM)
        assert [c.id for c in chronicarius.list_chronica(OWNER)] == ["dinner-saturday"]
        # The ID is free again: the next first write creates it anew, empty.
        again = chronicarius.record_actum("rafa", reply("Rafa's now."))
        assert chronicarius.get_acta("rafa", CHRONICUM) == [again]

    def test_rafas_and_a_missing_one_are_not_found_and_nothing_goes(self, chronicarius):
        stored = record_dinner(chronicarius)
        for owner, chronicum_id in (("rafa", CHRONICUM), (OWNER, "never-used")):
            with pytest.raises(ChronicumNotFound) as caught:
                chronicarius.delete_chronicum(owner, chronicum_id)
            assert str(caught.value) == chronicum_id
        assert chronicarius.get_acta(OWNER, CHRONICUM) == stored

    def test_chronicum_deleted_is_sent(self, chronicarius):
        record_dinner(chronicarius)
        heard = []

        def receiver(sender, **kwargs):
            heard.append(kwargs)

        chronicum_deleted.connect(receiver)
        try:
            chronicarius.delete_chronicum(OWNER, CHRONICUM)
            with pytest.raises(ChronicumNotFound):
                chronicarius.delete_chronicum(OWNER, CHRONICUM)
        finally:
            chronicum_deleted.disconnect(receiver)
        assert [(k["owner_id"], k["chronicum_id"]) for k in heard] == [(OWNER, CHRONICUM)]

    def test_a_plain_store_cannot_delete(self):
        c = Chronicarius(PlainStore())
        c.record_actum(OWNER, reply("Held."))
        with pytest.raises(StoreUnsupported, match="cannot delete"):
            c.delete_chronicum(OWNER, CHRONICUM)

    @pytest.mark.slow
    def test_writers_racing_a_delete_never_see_a_database_error(self, chronicarius):
        """Every actum a writer was told is stored is gone with the chronicum (written
        before the delete) or in the chronicum created again (after it)."""
        record_dinner(chronicarius)
        chronicarius.record_acta(OWNER, [reply(f"filler {n}") for n in range(3000)])
        deleted = threading.Event()

        def work(i: int):
            if i == 4:
                try:
                    chronicarius.delete_chronicum(OWNER, CHRONICUM)
                finally:
                    deleted.set()
                return None
            told = []
            n = 0
            while True:
                after = deleted.is_set()
                told.append(chronicarius.record_actum(OWNER, reply(f"w{i} {n}")))
                n += 1
                if after and n > 5:
                    return told

        results = run_threads(5, work)
        errors = [r for r in results if isinstance(r, BaseException)]
        assert errors == [], errors
        assert not any(isinstance(r, DatabaseError) for r in results)
        remaining = {a.id for a in chronicarius.get_acta(OWNER, CHRONICUM)}
        assert all(a.content.startswith("w") for a in chronicarius.get_acta(OWNER, CHRONICUM))
        for told in results[:4]:
            kept = [a.id in remaining for a in told]
            # Each writer's acta: those before the delete are gone, those after it kept.
            assert kept == sorted(kept), kept
            assert kept[-1], "a write after the delete is in the chronicum created again"


class TestPop:
    def test_pops_the_newest_in_write_order_until_none(self, chronicarius):
        stored = record_dinner(chronicarius)
        assert chronicarius.pop_actum(OWNER, CHRONICUM) == stored[-1]
        assert chronicarius.get_acta(OWNER, CHRONICUM) == stored[:-1]
        for expected in reversed(stored[:-1]):
            assert chronicarius.pop_actum(OWNER, CHRONICUM) == expected
        assert chronicarius.pop_actum(OWNER, CHRONICUM) is None
        assert chronicarius.get_chronicum(OWNER, CHRONICUM).owner_id == OWNER

    def test_rafa_cannot_pop(self, chronicarius):
        stored = record_dinner(chronicarius)
        for owner, chronicum_id in (("rafa", CHRONICUM), (OWNER, "never-used")):
            with pytest.raises(ChronicumNotFound):
                chronicarius.pop_actum(owner, chronicum_id)
        assert chronicarius.get_acta(OWNER, CHRONICUM) == stored

    def test_a_plain_store_cannot_pop(self):
        c = Chronicarius(PlainStore())
        c.record_actum(OWNER, reply("Held."))
        with pytest.raises(StoreUnsupported, match="cannot pop"):
            c.pop_actum(OWNER, CHRONICUM)

    @pytest.mark.parametrize("poppers", [2, 8])
    def test_concurrent_pops_never_return_the_same_actum(self, chronicarius, poppers):
        stored = chronicarius.record_acta(OWNER, [reply(f"r{n}") for n in range(40)])
        results = run_threads(
            poppers, lambda i: [chronicarius.pop_actum(OWNER, CHRONICUM) for _ in range(60)]
        )
        popped = [a for rs in results for a in rs if a is not None]
        assert sorted(a.id for a in popped) == sorted(a.id for a in stored)
        for rs in results:
            # Each popper sees the newest first, so its own pops go back in time.
            ids = [a.id for a in rs if a is not None]
            positions = [[a.id for a in stored].index(i) for i in ids]
            assert positions == sorted(positions, reverse=True)

    @pytest.mark.slow
    def test_pop_while_writers_write_loses_nothing_it_did_not_return(self, chronicarius):
        chronicarius.create_chronicum(OWNER, CHRONICUM)

        def work(i: int):
            if i < 3:
                told = [chronicarius.record_actum(OWNER, reply(f"w{i} {n}")) for n in range(100)]
                return ("wrote", told)
            popped = []
            for _ in range(150):
                actum = chronicarius.pop_actum(OWNER, CHRONICUM)
                if actum is not None:
                    popped.append(actum)
            return ("popped", popped)

        results = run_threads(5, work)
        assert not [r for r in results if isinstance(r, BaseException)], results
        written = [a for kind, acta in results if kind == "wrote" for a in acta]
        popped = [a for kind, acta in results if kind == "popped" for a in acta]
        remaining = chronicarius.get_acta(OWNER, CHRONICUM)
        assert len({a.id for a in popped}) == len(popped)
        assert sorted(a.id for a in popped + remaining) == sorted(a.id for a in written)
        # What stays keeps each writer's order.
        for i in range(3):
            mine = [int(a.content.split()[1]) for a in remaining if a.content.startswith(f"w{i} ")]
            assert mine == sorted(mine)


class TestAsyncTwins:
    async def test_the_lifecycle_from_asyncio(self):
        from chronica.stores.memory import InMemoryStore

        c = Chronicarius(InMemoryStore())
        created = await c.acreate_chronicum(OWNER, CHRONICUM)
        stored = await c.arecord_acta(OWNER, [reply("a"), reply("b")])
        assert await c.alist_chronica(OWNER) == [await c.aget_chronicum(OWNER, CHRONICUM)]
        assert (await c.alist_chronica(OWNER))[0].started_at == created.started_at
        assert await c.apop_actum(OWNER, CHRONICUM) == stored[-1]
        await c.adelete_chronicum(OWNER, CHRONICUM)
        with pytest.raises(ChronicumNotFound):
            await c.aget_chronicum(OWNER, CHRONICUM)

    def test_twins_keep_their_names_and_documents(self):
        for name in (
            *("record_actum", "record_acta", "create_chronicum", "list_chronica", "pop_actum"),
            *("list_chronica_page", "get_acta_page"),
        ):
            twin = getattr(Chronicarius, f"a{name}")
            assert twin.__name__ == f"a{name}"
            assert f":meth:`{name}`" in twin.__doc__


def test_record_is_deprecated_for_record_acta():
    """``record`` and ``arecord`` (a batch with state, answering ``Recorded``) keep working
    for a release, with a DeprecationWarning: ``record_acta`` takes ``state=`` and its
    list tells a replay by ``replayed``."""
    import asyncio

    from chronica import Recorded

    c = Chronicarius(InMemoryStore())
    with pytest.warns(DeprecationWarning, match="record_acta"):
        first = c.record(OWNER, [scenario.booking_reply()], idempotency_key="k")
    assert isinstance(first, Recorded)
    assert not first.replayed
    with pytest.warns(DeprecationWarning, match="arecord_acta"):
        again = asyncio.run(c.arecord(OWNER, [scenario.booking_reply()], idempotency_key="k"))
    assert (again.acta, again.replayed) == (first.acta, True)
    replay = c.record_acta(OWNER, [scenario.booking_reply()], idempotency_key="k")
    assert (replay, replay.replayed) == (first.acta, True)
