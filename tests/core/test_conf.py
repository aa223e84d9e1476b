"""``chronica.conf``: ``settings.CHRONICA``, one typed property per setting, read when first
asked for and kept until a setting changes (so ``override_settings`` takes effect at once);
a key left out takes its default, and a value a property cannot use is
``ImproperlyConfigured`` naming the setting.

No database: these read settings only. ``manage.py check``'s report of the same values
(chronica.E0xx) is tested beside the behaviour each setting drives."""

from __future__ import annotations

import math
import re
from typing import Any

import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.test import override_settings

from chronica.api import owner_id_from_user
from chronica.conf import (
    DEFAULTS,
    RETIRED,
    ChronicaSettings,
    _limit,
    _resolve,
    chronica_settings,
    is_postgresql,
)
from chronica.stores.memory import InMemoryStore
from chronica.tokens import estimate_tokens

from ..teststores import PlainStore

MEMORY = "chronica.stores.memory.InMemoryStore"
POSTGRESQL = "django.db.backends.postgresql"
RULE = {"older_than": "90d", "action": "delete"}

# The documented defaults (SPEC.md, docs), written out rather than read from DEFAULTS.
EXPECTED_DEFAULTS: dict[str, Any] = {
    "STORE": "chronica.stores.db.DjangoStore",
    "STORE_OPTIONS": {},
    "OWNER_ID": "chronica.api.owner_id_from_user",
    "TOKEN_COUNTER": "chronica.tokens.estimate_tokens",
    "MAX_ACTUM_BYTES": 4 * 1024 * 1024,
    "API_MAX_ACTA": 1000,
    "API_MAX_RESPONSE_BYTES": 8 * 1024 * 1024,
    "FOLLOW_POLL_INTERVAL": 1.0,
    "AUTO_CREATE": True,
    "LISTEN_DATABASE": None,
    "READ_DATABASES": (),
    "AGENT_THROTTLE_RATE": "1000/min",
    "OTEL_RECORD_CONTENT": False,
    "SEARCH_CONFIG": "simple",
    "RETENTION": [],
}


def username(user: Any) -> str:
    return str(user.username)


def by_length(actum: Any) -> int:
    return len(actum.content)


@pytest.fixture
def databases(monkeypatch):
    """Aliases LISTEN_DATABASE may name, added to DATABASES for one test: nothing
    connects to them (DATABASES itself is not overridden, so no connection changes)."""
    monkeypatch.setitem(settings.DATABASES, "direct", {"ENGINE": POSTGRESQL, "NAME": "app"})
    monkeypatch.setitem(
        settings.DATABASES, "files", {"ENGINE": "django.db.backends.sqlite3", "NAME": "x"}
    )
    monkeypatch.setitem(settings.DATABASES, "bare", {"NAME": "x"})


# -- defaults -------------------------------------------------------------------------


def test_every_setting_has_a_property_and_an_expected_default():
    properties = {
        name
        for name, member in vars(ChronicaSettings).items()
        if isinstance(member, property) and name.isupper()
    }
    assert properties == set(DEFAULTS) == set(EXPECTED_DEFAULTS)


@pytest.mark.parametrize("name", sorted(EXPECTED_DEFAULTS))
@pytest.mark.parametrize("chronica", [{}, None, {"UNRELATED": 1}], ids=["empty", "none", "other"])
def test_a_key_left_out_takes_its_default(name, chronica):
    with override_settings(CHRONICA=chronica):
        value = getattr(chronica_settings, name)
    assert value == EXPECTED_DEFAULTS[name]
    assert type(value) is type(EXPECTED_DEFAULTS[name])


def test_no_chronica_setting_at_all_is_every_default():
    with override_settings():
        del settings.CHRONICA
        assert not hasattr(settings, "CHRONICA")
        assert chronica_settings.user_settings == {}
        assert {name: getattr(chronica_settings, name) for name in DEFAULTS} == EXPECTED_DEFAULTS


def test_the_defaults_resolve_to_chronicas_own_callables():
    with override_settings(CHRONICA={}):
        assert chronica_settings.token_counter() is estimate_tokens
        assert chronica_settings.owner_id_function() is owner_id_from_user


# -- overrides, read on access --------------------------------------------------------

OVERRIDES: list[tuple[str, Any, Any]] = [
    ("STORE", MEMORY, MEMORY),
    ("STORE", InMemoryStore, InMemoryStore),
    ("STORE_OPTIONS", {"using": "replica"}, {"using": "replica"}),
    ("OWNER_ID", f"{__name__}.username", f"{__name__}.username"),
    ("OWNER_ID", username, username),
    ("TOKEN_COUNTER", f"{__name__}.by_length", f"{__name__}.by_length"),
    ("TOKEN_COUNTER", by_length, by_length),
    ("MAX_ACTUM_BYTES", 1024, 1024),
    ("MAX_ACTUM_BYTES", None, None),
    ("API_MAX_ACTA", 7, 7),
    ("API_MAX_ACTA", 1, 1),
    ("API_MAX_RESPONSE_BYTES", 9_000, 9_000),
    ("FOLLOW_POLL_INTERVAL", 0.25, 0.25),
    ("FOLLOW_POLL_INTERVAL", 2, 2.0),
    ("FOLLOW_POLL_INTERVAL", 3600, 3600.0),
    ("AUTO_CREATE", False, False),
    ("LISTEN_DATABASE", "direct", "direct"),
    ("READ_DATABASES", ["replica"], ("replica",)),
    ("READ_DATABASES", ("replica", "direct"), ("replica", "direct")),
    ("AGENT_THROTTLE_RATE", "2/min", "2/min"),
    ("AGENT_THROTTLE_RATE", "10/s", "10/s"),
    ("AGENT_THROTTLE_RATE", "5/hour", "5/hour"),
    ("AGENT_THROTTLE_RATE", "1/day", "1/day"),
    ("AGENT_THROTTLE_RATE", None, None),
    ("OTEL_RECORD_CONTENT", True, True),
    ("SEARCH_CONFIG", "english", "english"),
    ("SEARCH_CONFIG", "pg_catalog.english", "pg_catalog.english"),
    ("SEARCH_CONFIG", "x" * 63, "x" * 63),
    ("SEARCH_CONFIG", "pg_catalog." + "x" * 63, "pg_catalog." + "x" * 63),
    ("RETENTION", [RULE], [RULE]),
    ("RETENTION", (RULE,), [RULE]),
    ("RETENTION", None, []),
]


def test_every_setting_has_an_override_that_differs_from_its_default():
    changed = {name for name, _, got in OVERRIDES if got != EXPECTED_DEFAULTS[name]}
    assert changed == set(DEFAULTS)


@pytest.mark.parametrize(("name", "given", "expected"), OVERRIDES)
@pytest.mark.usefixtures("databases")
def test_an_override_takes_effect_on_access(name, given, expected):
    with override_settings(CHRONICA={}):
        with override_settings(CHRONICA={name: given}):
            value = getattr(chronica_settings, name)
        after = getattr(chronica_settings, name)
    assert value == expected
    assert type(value) is type(expected)
    assert after == EXPECTED_DEFAULTS[name]


def test_a_fresh_instance_reads_the_same_settings():
    with override_settings(CHRONICA={"API_MAX_ACTA": 7}):
        assert ChronicaSettings().API_MAX_ACTA == 7


def test_a_value_is_kept_until_a_setting_changes():
    given = {"API_MAX_ACTA": 7, "OWNER_ID": username}
    with override_settings(CHRONICA=given):
        assert chronica_settings.API_MAX_ACTA == 7
        assert chronica_settings.owner_id_function() is username
        # Changed behind Django's back (no setting_changed): the kept values stay.
        given["API_MAX_ACTA"], given["OWNER_ID"] = 8, by_length
        assert chronica_settings.API_MAX_ACTA == 7
        assert chronica_settings.owner_id_function() is username
        with override_settings(CHRONICA=given):
            assert chronica_settings.API_MAX_ACTA == 8
            assert chronica_settings.owner_id_function() is by_length
        # Any setting changed is read again: some values depend on DATABASES.
        given["API_MAX_ACTA"] = 9
        with override_settings(SOMETHING_ELSE=1):
            assert chronica_settings.API_MAX_ACTA == 9


def test_a_refused_value_is_refused_at_every_read():
    with override_settings(CHRONICA={"API_MAX_ACTA": 0}):
        for _ in range(2):
            with pytest.raises(ImproperlyConfigured, match="API_MAX_ACTA"):
                _ = chronica_settings.API_MAX_ACTA


def test_the_named_callables_are_resolved_on_access():
    with override_settings(
        CHRONICA={"TOKEN_COUNTER": f"{__name__}.by_length", "OWNER_ID": username}
    ):
        assert chronica_settings.token_counter() is by_length
        assert chronica_settings.owner_id_function() is username


def test_the_store_is_built_with_the_store_options_as_keyword_arguments():
    config = {"STORE": "tests.teststores.PlainStore", "STORE_OPTIONS": {"region": "jkt"}}
    with override_settings(CHRONICA=config):
        first, second = chronica_settings.build_store(), chronica_settings.build_store()
    assert isinstance(first, PlainStore)
    assert first.options == {"region": "jkt"}
    assert first is not second


# -- values a property refuses --------------------------------------------------------

INVALID: list[tuple[str, Any, str]] = [
    ("STORE_OPTIONS", [], "must be a dict of keyword arguments"),
    ("STORE_OPTIONS", "using=default", "must be a dict of keyword arguments"),
    ("STORE_OPTIONS", None, "must be a dict of keyword arguments"),
    *(
        (name, value, f"must be a positive int{or_none}, not {value!r}")
        for name, or_none, values in [
            ("MAX_ACTUM_BYTES", " or None", [0, -1, True, False, "4MiB", 1.5]),
            ("API_MAX_ACTA", "", [None, 0, -5, True, "7", 7.0]),
            ("API_MAX_RESPONSE_BYTES", "", [None, 0, True, "8MiB", 1.5]),
        ]
        for value in values
    ),
    *(
        ("FOLLOW_POLL_INTERVAL", value, f"above 0 and at most 3600, not {value!r}")
        for value in [0, -1, 3600.5, math.nan, math.inf, True, "1s", None]
    ),
    *(
        (name, value, f"must be True or False, not {value!r}")
        for name in ["AUTO_CREATE", "OTEL_RECORD_CONTENT"]
        for value in ["false", "True", 0, 1, None]
    ),
    ("LISTEN_DATABASE", "nowhere", "must be None or an alias of DATABASES"),
    ("LISTEN_DATABASE", 5, "must be None or an alias of DATABASES"),
    ("LISTEN_DATABASE", "files", "must be a PostgreSQL database, not django.db.backends.sqlite3"),
    ("LISTEN_DATABASE", "bare", "must be a PostgreSQL database, not one without an ENGINE"),
    ("READ_DATABASES", "replica", "must be a list of database aliases"),
    ("READ_DATABASES", None, "must be a list of database aliases"),
    ("READ_DATABASES", {"replica"}, "must be a list of database aliases"),
    ("READ_DATABASES", [1], "must hold database aliases (str)"),
    ("READ_DATABASES", [""], "must hold database aliases (str)"),
    ("READ_DATABASES", ["replica", None], "must hold database aliases (str)"),
    *(
        ("AGENT_THROTTLE_RATE", value, f"a rate such as '1000/min', or None, not {value!r}")
        for value in ["lots", "1000", "1000/week", "/min", " 1000/min", "1000/min ", 1000]
    ),
    *(
        ("SEARCH_CONFIG", value, "must name a PostgreSQL text search configuration")
        for value in [
            "",
            None,
            5,
            "a b",
            "x" * 64,
            "pg_catalog." + "x" * 64,
            "english'; DROP TABLE acta; --",
            "a.b.c",
            "1st",
            "pg_catalog.",
        ]
    ),
    ("RETENTION", "30d", "must be a list of rules"),
    ("RETENTION", RULE, "must be a list of rules"),
    ("RETENTION", ["30d"], "[0] must be a dict"),
    ("RETENTION", [RULE, {"older_than": "30d", "action": "shred"}], "[1]['action']"),
]


@pytest.mark.parametrize(("name", "value", "says"), INVALID)
@pytest.mark.usefixtures("databases")
def test_a_value_the_property_refuses_is_improperly_configured_naming_it(name, value, says):
    with (
        override_settings(CHRONICA={name: value}),
        pytest.raises(ImproperlyConfigured, match=re.escape(f"CHRONICA[{name!r}]")) as caught,
    ):
        getattr(chronica_settings, name)
    assert says in str(caught.value)


def test_every_validated_setting_has_a_refused_value():
    # STORE, OWNER_ID and TOKEN_COUNTER are checked where they are called (below).
    refused = {name for name, _, _ in INVALID}
    assert refused == set(DEFAULTS) - {"STORE", "OWNER_ID", "TOKEN_COUNTER"}


@pytest.mark.parametrize("name", sorted(DEFAULTS))
@pytest.mark.parametrize("chronica", [MEMORY, ["STORE"], 42], ids=["str", "list", "int"])
def test_a_chronica_setting_that_is_not_a_dict_is_refused_by_every_property(name, chronica):
    with (
        override_settings(CHRONICA=chronica),
        pytest.raises(ImproperlyConfigured, match="The CHRONICA setting must be a dict"),
    ):
        getattr(chronica_settings, name)


@pytest.mark.parametrize(
    ("method", "config", "says"),
    [
        ("token_counter", {"TOKEN_COUNTER": "chronica.tokens.nothing"}, "cannot be imported"),
        ("token_counter", {"TOKEN_COUNTER": 8}, "must be a callable or a dotted path"),
        ("owner_id_function", {"OWNER_ID": "chronica.api.nobody"}, "cannot be imported"),
        ("owner_id_function", {"OWNER_ID": "chronica.conf.DEFAULTS"}, "must be a callable"),
        ("build_store", {"STORE": "chronica.stores.nowhere.Store"}, "cannot be imported"),
        ("build_store", {"STORE": 42}, "must be a callable or a dotted path"),
        (
            "build_store",
            {"STORE": "chronica.values.ActaQuery"},
            "built ActaQuery, which lacks the Store methods create, record, acta and get",
        ),
        (
            "build_store",
            {"STORE": MEMORY, "STORE_OPTIONS": {"size": 3}},
            "does not accept CHRONICA['STORE_OPTIONS'] {'size': 3}",
        ),
    ],
)
def test_a_callable_setting_is_checked_when_it_is_resolved(method, config, says):
    name = next(iter(config))
    with (
        override_settings(CHRONICA=config),
        pytest.raises(ImproperlyConfigured, match=re.escape(f"CHRONICA[{name!r}]")) as caught,
    ):
        getattr(chronica_settings, method)()
    assert says in str(caught.value)


# -- the helpers ----------------------------------------------------------------------


def test_resolve_imports_a_dotted_path_and_keeps_a_callable():
    assert _resolve("TOKEN_COUNTER", "chronica.tokens.estimate_tokens") is estimate_tokens
    assert _resolve("TOKEN_COUNTER", by_length) is by_length
    assert _resolve("STORE", InMemoryStore) is InMemoryStore


@pytest.mark.parametrize(
    "path", ["chronica.nowhere.thing", "chronica.tokens.nothing", "no_dots_at_all"]
)
def test_resolve_names_the_setting_and_chains_the_import_error(path):
    with pytest.raises(ImproperlyConfigured) as caught:
        _resolve("OWNER_ID", path)
    assert str(caught.value).startswith(f"CHRONICA['OWNER_ID'] = {path!r} cannot be imported: ")
    assert isinstance(caught.value.__cause__, ImportError)


@pytest.mark.parametrize("value", [None, 42, b"chronica.tokens.estimate_tokens", ["x"]])
def test_resolve_refuses_what_is_neither_a_path_nor_a_callable(value):
    with pytest.raises(ImproperlyConfigured) as caught:
        _resolve("STORE", value)
    assert str(caught.value) == "CHRONICA['STORE'] must be a callable or a dotted path to one"


@pytest.mark.parametrize("value", [1, 7, 2**40])
@pytest.mark.parametrize("allow_none", [True, False])
def test_limit_keeps_a_positive_int(value, allow_none):
    assert _limit("API_MAX_ACTA", value, allow_none=allow_none) == value


def test_limit_takes_none_only_where_it_means_no_limit():
    assert _limit("MAX_ACTUM_BYTES", None, allow_none=True) is None
    with pytest.raises(ImproperlyConfigured) as caught:
        _limit("API_MAX_ACTA", None, allow_none=False)
    assert str(caught.value) == "CHRONICA['API_MAX_ACTA'] must be a positive int, not None"


@pytest.mark.parametrize("value", [0, -1, True, False, 1.0, "1"])
@pytest.mark.parametrize(("allow_none", "or_none"), [(True, " or None"), (False, "")])
def test_limit_refuses_what_is_not_a_positive_int(value, allow_none, or_none):
    with pytest.raises(ImproperlyConfigured) as caught:
        _limit("MAX_ACTUM_BYTES", value, allow_none=allow_none)
    assert str(caught.value) == (
        f"CHRONICA['MAX_ACTUM_BYTES'] must be a positive int{or_none}, not {value!r}"
    )


@pytest.mark.parametrize(
    ("engine", "expected"),
    [
        ("django.db.backends.postgresql", True),
        ("django.contrib.gis.db.backends.postgis", True),
        ("myproject.backends.postgresql_pooled", True),
        ("django.db.backends.sqlite3", False),
        ("django.contrib.gis.db.backends.spatialite", False),
        ("django.db.backends.mysql", False),
        ("", False),
        (None, False),
    ],
)
def test_is_postgresql(engine, expected):
    assert is_postgresql({"ENGINE": engine, "NAME": "app"}) is expected


def test_an_entry_without_an_engine_is_not_postgresql():
    assert is_postgresql({"NAME": "app"}) is False


# -- retired keys ---------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(RETIRED))
def test_a_retired_key_says_since_when_and_why_and_is_read_by_nothing(name):
    assert name not in DEFAULTS
    assert not hasattr(ChronicaSettings, name)
    assert re.fullmatch(r"\d+\.\d+\.\d+: \S.*", RETIRED[name])
    with override_settings(CHRONICA={name: 10}):
        assert {key: getattr(chronica_settings, key) for key in DEFAULTS} == EXPECTED_DEFAULTS
