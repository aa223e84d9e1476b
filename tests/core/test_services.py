"""The module functions of chronica.services, driven by settings.CHRONICA."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.core.checks import run_checks
from django.core.exceptions import ImproperlyConfigured
from django.db import connection, connections
from django.test import override_settings
from django.test.utils import CaptureQueriesContext

from chronica import Actum, ChronicumNotFound, IdempotencyUnsupported, InvalidActum, services
from chronica.stores.db import DjangoStore
from chronica.stores.memory import InMemoryStore

from .. import scenario
from ..scenario import CHRONICUM, OWNER

MEMORY = {"STORE": "chronica.stores.memory.InMemoryStore"}


@pytest.fixture(autouse=True)
def fresh_chronicarius():
    services.reset_chronicarius()
    yield
    services.reset_chronicarius()


@pytest.mark.django_db
class TestDefaults:
    def test_the_default_store_is_django_store(self):
        assert isinstance(services.get_chronicarius().store, DjangoStore)

    def test_built_once(self):
        assert services.get_chronicarius() is services.get_chronicarius()

    def test_dinner_friday_through_the_module_functions(self):
        for actum in scenario.acta():
            services.record_actum(OWNER, actum)
        window = services.get_acta(OWNER, CHRONICUM, kinds=["message"], last_n=3)
        assert [a.actor for a in window] == ["search", "ardian", "concierge"]
        assert services.get_chronicum(OWNER, CHRONICUM).owner_id == OWNER
        with pytest.raises(ChronicumNotFound):
            services.get_acta("rafa", CHRONICUM)


@pytest.mark.django_db(transaction=True)
class TestAsyncTwins:
    @pytest.fixture(autouse=True)
    async def close_executor_connections(self):
        yield
        # sync_to_async ran the queries on its executor thread: close that thread's
        # connection, or the test database cannot be dropped at the end.
        await sync_to_async(connections.close_all)()

    async def test_async_twins_on_the_django_store(self):
        first = await services.arecord_actum(
            OWNER, scenario.booking_reply(), idempotency_key="booking-reply-1"
        )
        again = await services.arecord_actum(
            OWNER,
            scenario.booking_reply(scenario.BOOKING_REPLY_REWORDED),
            idempotency_key="booking-reply-1",
        )
        assert again == first
        assert await services.aget_acta(OWNER, CHRONICUM) == [first]
        chronicum = await services.aget_chronicum(OWNER, CHRONICUM)
        assert chronicum.last_activity_at == first.at
        with pytest.raises(ChronicumNotFound):
            await services.aget_chronicum("rafa", CHRONICUM)


class TestSettings:
    def test_override_settings_rebuilds_the_chronicarius(self):
        with override_settings(CHRONICA=MEMORY):
            memory = services.get_chronicarius()
            assert isinstance(memory.store, InMemoryStore)
            services.record_actum(OWNER, scenario.booking_reply())
            assert len(services.get_acta(OWNER, CHRONICUM)) == 1
        with override_settings(CHRONICA=MEMORY):
            assert services.get_chronicarius() is not memory

    def test_store_options_are_passed(self):
        config = {"STORE": "tests.teststores.PlainStore", "STORE_OPTIONS": {"region": "jkt"}}
        with override_settings(CHRONICA=config):
            assert services.get_chronicarius().store.options == {"region": "jkt"}

    def test_django_store_using(self):
        with override_settings(CHRONICA={"STORE_OPTIONS": {"using": "default"}}):
            store = services.get_chronicarius().store
            assert isinstance(store, DjangoStore)
            assert store.alias == "default"

    def test_a_callable_store(self):
        with override_settings(CHRONICA={"STORE": InMemoryStore}):
            assert isinstance(services.get_chronicarius().store, InMemoryStore)

    @pytest.mark.parametrize(
        ("config", "message"),
        [
            ({"STORE": "chronica.stores.nowhere.Store"}, "CHRONICA['STORE']"),
            ({"STORE": "chronica.stores.memory.NoSuchStore"}, "CHRONICA['STORE']"),
            ({"STORE": 42}, "CHRONICA['STORE']"),
            ({"STORE": "chronica.values.ActaQuery"}, "CHRONICA['STORE']"),
            ({"STORE_OPTIONS": []}, "CHRONICA['STORE_OPTIONS']"),
            ({"STORE": MEMORY["STORE"], "STORE_OPTIONS": {"size": 3}}, "CHRONICA['STORE']"),
            ("chronica.stores.memory.InMemoryStore", "CHRONICA setting must be a dict"),
        ],
    )
    def test_a_wrong_setting_is_improperly_configured_naming_it(self, config, message):
        with override_settings(CHRONICA=config), pytest.raises(ImproperlyConfigured) as caught:
            services.record_actum(OWNER, scenario.booking_reply())
        assert message in str(caught.value)

    def test_a_key_on_a_store_that_is_not_idempotent(self):
        with (
            override_settings(CHRONICA={"STORE": "tests.teststores.PlainStore"}),
            pytest.raises(IdempotencyUnsupported),
        ):
            services.record_actum(OWNER, scenario.booking_reply(), idempotency_key="k")


class TestSystemChecks:
    def ids(self):
        return sorted(m.id for m in run_checks() if m.id and m.id.startswith("chronica."))

    def test_no_setting_is_fine(self):
        assert self.ids() == []

    @pytest.mark.parametrize(
        ("config", "ids"),
        [
            ("not a dict", ["chronica.E001"]),
            ({"STROE": "x"}, ["chronica.E002"]),
            ({"STORE": "chronica.stores.nowhere.Store"}, ["chronica.E003"]),
            ({"STORE_OPTIONS": "using=default"}, ["chronica.E004"]),
            ({"OWNER_ID": "chronica.api.nobody"}, ["chronica.E005"]),
            ({"TOKEN_COUNTER": "chronica.tokens.nothing"}, ["chronica.E007"]),
            ({"TOKEN_COUNTER": 8}, ["chronica.E007"]),
            ({"MAX_ACTUM_BYTES": 0}, ["chronica.E010"]),
            ({"MAX_ACTUM_BYTES": "4MiB"}, ["chronica.E010"]),
            ({"MAX_ACTUM_BYTES": None}, []),
            ({"API_MAX_ACTA": None}, ["chronica.E011"]),
            ({"API_MAX_ACTA": -1}, ["chronica.E011"]),
            ({"TOKEN_COUNTER": "chronica.tokens.estimate_tokens", "API_MAX_ACTA": 50}, []),
            (MEMORY, []),
        ],
    )
    def test_a_bad_setting_is_reported_at_manage_py_check(self, config, ids):
        with override_settings(CHRONICA=config):
            assert self.ids() == ids

    def test_use_tz_false_is_a_warning(self):
        with override_settings(USE_TZ=False):
            assert "chronica.W001" in self.ids()


@pytest.mark.django_db(transaction=True)
class TestRoundTrips:
    """What one call sends, transaction statements included: a write is one statement
    on PostgreSQL (a first write too) and one transaction of at most four on SQLite; a
    window is one statement, an empty one and a missing chronicum's too."""

    def queries(self, call):
        with CaptureQueriesContext(connection) as ctx:
            call()
        return [q["sql"] for q in ctx.captured_queries]

    def writes(self):
        return 1 if connection.vendor == "postgresql" else 4

    def test_record_into_an_existing_chronicum(self):
        services.record_actum(OWNER, scenario.acta()[0])
        sqls = self.queries(lambda: services.record_actum(OWNER, scenario.acta()[1]))
        assert len(sqls) <= self.writes(), sqls

    def test_a_first_write_creates_the_chronicum_in_the_same_statement(self):
        sqls = self.queries(lambda: services.record_actum(OWNER, scenario.acta()[0]))
        assert len(sqls) <= self.writes(), sqls
        keyed = scenario.acta()[1]
        sqls = self.queries(
            lambda: services.record_actum(
                OWNER, dataclasses.replace(keyed, chronicum_id="fresh"), idempotency_key="k"
            )
        )
        assert len(sqls) <= (2 if connection.vendor == "postgresql" else 4), sqls

    def test_a_batch_is_one_write(self):
        services.record_actum(OWNER, scenario.acta()[0])
        sqls = self.queries(lambda: services.record_acta(OWNER, scenario.acta()[1:]))
        assert len(sqls) <= self.writes(), sqls

    def test_record_with_a_key_and_its_replay(self):
        services.record_actum(OWNER, scenario.acta()[0])
        reply = scenario.booking_reply()
        first = self.queries(lambda: services.record_actum(OWNER, reply, idempotency_key="k"))
        replay = self.queries(lambda: services.record_actum(OWNER, reply, idempotency_key="k"))
        assert len(first) <= self.writes(), first
        # A replay reads its batch back, with the owner checked, in a statement more.
        assert len(replay) <= (2 if connection.vendor == "postgresql" else 4), replay

    @pytest.mark.parametrize(
        "kwargs",
        [
            {},
            {"kinds": ["message"], "last_n": 3},
            {"actor_kinds": ["human", "agent"]},
            {"max_tokens": 100},
            {"last_n": 2, "before": "placeholder"},
        ],
    )
    def test_get_acta_reads_the_window_in_one_query(self, kwargs):
        stored = [services.record_actum(OWNER, actum) for actum in scenario.acta()]
        if kwargs.get("before"):
            kwargs["before"] = stored[-1].id
        sqls = self.queries(lambda: services.get_acta(OWNER, CHRONICUM, **kwargs))
        assert len(sqls) == 1, sqls  # the owner's check and the window together
        assert reads_acta(sqls[0]), sqls

    def test_an_empty_window_and_a_missing_chronicum_are_one_query_each(self):
        services.record_actum(OWNER, scenario.acta()[0])
        sqls = self.queries(lambda: services.get_acta(OWNER, CHRONICUM, kinds=["thought"]))
        assert len(sqls) == 1, sqls
        with CaptureQueriesContext(connection) as ctx, pytest.raises(ChronicumNotFound):
            services.get_acta("rafa", CHRONICUM)
        assert len(ctx.captured_queries) == 1, ctx.captured_queries

    @pytest.mark.parametrize("last_n", [20, 0], ids=["a-limit", "no-limit"])
    def test_a_page_within_a_byte_budget_is_one_query(self, last_n):
        """The API's window (a byte budget; whether an older page exists told by the same
        read) is one statement, with a limit or without; so are an empty page and another
        owner's chronicum."""
        for actum in scenario.acta():
            services.record_actum(OWNER, actum)

        def page(owner: str, **filters: Any) -> object:
            return services.get_acta_page(
                owner, CHRONICUM, last_n=last_n, max_bytes=10**6, raw_data=True, **filters
            )

        sqls = self.queries(lambda: page(OWNER))
        assert len(sqls) == 1, sqls
        assert reads_acta(sqls[0]), sqls
        sqls = self.queries(lambda: page(OWNER, actors=["nobody"]))
        assert len(sqls) == 1, sqls
        with CaptureQueriesContext(connection) as ctx, pytest.raises(ChronicumNotFound):
            page("rafa")
        assert len(ctx.captured_queries) == 1, ctx.captured_queries


def reads_acta(sql: str) -> bool:
    """A window's statement: a read of acta."""
    return "FROM acta" in sql


@pytest.mark.django_db
class TestBadInputWritesNothing:
    @pytest.mark.parametrize(
        "changes",
        [
            {"content": "Hi\x00"},
            {"actor": "a\x00"},
            {"chronicum_id": "d\x00f"},
            {"chronicum_id": "x" * 300},
            {"actor": "x" * 300},
            {"content": None},
            {"actor": None},
            {"kind": "email"},
        ],
    )
    def test_through_services(self, changes):
        fields = {
            "chronicum_id": CHRONICUM,
            "kind": "message",
            "actor_kind": "human",
            "actor": OWNER,
            "content": "Hi.",
        }
        fields.update(changes)
        from chronica import models

        with CaptureQueriesContext(connection) as ctx, pytest.raises(InvalidActum):
            services.record_actum(OWNER, Actum(**fields))
        assert ctx.captured_queries == []
        assert models.Chronicum.objects.count() == 0
        assert models.Actum.objects.count() == 0
