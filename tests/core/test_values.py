"""``chronica.values``: the frozen value types that cross every boundary of chronica.

Their enums and what a string value turns into, their fields and defaults, that none
can be changed once made, equality by value, ``RecordedActa`` being a list with a
``replayed`` flag, ``ChronicaPage.next_before``'s deprecation, and :data:`FILTERS`
agreeing with ``ActaQuery`` and ``Actum``. No database: these are plain values."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from enum import StrEnum
from typing import Any

import pytest

from chronica import values
from chronica.values import (
    FILTERS,
    ActaPage,
    ActaQuery,
    ActorKind,
    Actum,
    ActumKind,
    ChronicaPage,
    Chronicum,
    Erasure,
    Filter,
    NamespaceListing,
    Recorded,
    RecordedActa,
    Redaction,
    SearchHit,
    StateChange,
    StateScope,
    StateView,
)

AT = dt.datetime(2026, 12, 4, 19, 30, tzinfo=dt.UTC)
CHRONICUM = Chronicum("dinner-friday", "ardian", AT, AT)


def actum(**fields: Any) -> Actum:
    given: dict[str, Any] = {
        "chronicum_id": "dinner-friday",
        "kind": ActumKind.MESSAGE,
        "actor_kind": ActorKind.HUMAN,
        "actor": "ardian",
        "content": "Table for 4 on Friday?",
    }
    return Actum(**{**given, **fields})


# One of each value type, to check what every one of them promises.
INSTANCES: dict[type, Any] = {
    Chronicum: CHRONICUM,
    Redaction: Redaction(AT, "card number"),
    Erasure: Erasure("ab" * 32, AT, "asked to be forgotten", {"acta": 12}),
    Actum: actum(),
    ActaQuery: ActaQuery(last_n=3),
    Filter: FILTERS[0],
    SearchHit: SearchHit(actum(), 0.5, "[Table] for 4"),
    Recorded: Recorded([actum()]),
    ActaPage: ActaPage([actum()], "a1"),
    ChronicaPage: ChronicaPage([CHRONICUM], CHRONICUM),
    StateChange: StateChange(namespace="dinner", set={"party": 4}),
    StateView: StateView(CHRONICUM, {"party": 4}, {}, {}),
    NamespaceListing: NamespaceListing([(CHRONICUM, {"party": 4})], {}, {}),
}

REQUIRED = object()

# Each type's fields, in order, and their defaults (REQUIRED: none).
FIELDS: dict[type, list[tuple[str, Any]]] = {
    Chronicum: [
        ("id", REQUIRED),
        ("owner_id", REQUIRED),
        ("started_at", REQUIRED),
        ("last_activity_at", REQUIRED),
    ],
    Redaction: [("at", REQUIRED), ("reason", "")],
    Erasure: [("owner_hash", REQUIRED), ("at", REQUIRED), ("reason", ""), ("counts", {})],
    Actum: [
        ("chronicum_id", REQUIRED),
        ("kind", REQUIRED),
        ("actor_kind", REQUIRED),
        ("actor", REQUIRED),
        ("content", ""),
        ("id", ""),
        ("at", None),
        ("call_id", ""),
        ("data", None),
        ("recorded_by", None),
        ("compacts", ""),
        ("redacted", None),
    ],
    ActaQuery: [
        ("kinds", frozenset()),
        ("actor_kinds", frozenset()),
        ("last_n", 0),
        ("max_tokens", None),
        ("before", None),
        ("actors", frozenset()),
        ("max_bytes", None),
        ("raw_data", False),
        ("compacted", False),
    ],
    Filter: [
        ("field", REQUIRED),
        ("name", REQUIRED),
        ("attribute", REQUIRED),
        ("help", REQUIRED),
        ("choices", None),
    ],
    SearchHit: [("actum", REQUIRED), ("rank", REQUIRED), ("snippet", REQUIRED)],
    Recorded: [("acta", REQUIRED), ("replayed", False)],
    ActaPage: [("acta", REQUIRED), ("next_before", None)],
    ChronicaPage: [("chronica", REQUIRED), ("last", None)],
    StateChange: [
        ("namespace", REQUIRED),
        ("scope", StateScope.CHRONICUM),
        ("set", {}),
        ("path", ()),
        ("replace", False),
        ("expect", None),
    ],
    StateView: [
        ("chronicum", REQUIRED),
        ("chronicum_state", REQUIRED),
        ("owner_state", REQUIRED),
        ("namespace_state", REQUIRED),
        ("acta", None),
    ],
    NamespaceListing: [
        ("chronica", REQUIRED),
        ("owner_states", REQUIRED),
        ("namespace_state", REQUIRED),
    ],
}


def test_every_value_type_is_checked_here():
    exported = [getattr(values, name) for name in values.__all__]
    dataclass_types = {t for t in exported if dataclasses.is_dataclass(t)}
    assert dataclass_types == set(INSTANCES) == set(FIELDS)


# -- the enums ------------------------------------------------------------------------

ENUMS = [
    (ActumKind, ["message", "thought", "tool_request", "tool_response"]),
    (ActorKind, ["human", "agent", "system"]),
    (StateScope, ["chronicum", "owner", "namespace"]),
]


@pytest.mark.parametrize(("enum", "expected"), ENUMS, ids=[e.__name__ for e, _ in ENUMS])
def test_an_enums_values_are_its_wire_strings(enum, expected):
    assert [member.value for member in enum] == expected
    for member in enum:
        assert enum(member.value) is member
        assert member == member.value
        assert str(member) == member.value
        assert json.dumps(member) == json.dumps(member.value)


@pytest.mark.parametrize("enum", [ActumKind, ActorKind, StateScope])
@pytest.mark.parametrize("value", ["MESSAGE", "Human", "memo", ""])
def test_an_enum_refuses_a_string_it_does_not_hold(enum, value):
    with pytest.raises(ValueError):
        enum(value)


# -- fields, defaults, frozen, equality -----------------------------------------------


@pytest.mark.parametrize("cls", list(FIELDS), ids=lambda c: c.__name__)
def test_the_fields_and_their_defaults(cls):
    found = []
    for field in dataclasses.fields(cls):
        if field.default is not dataclasses.MISSING:
            default = field.default
        elif field.default_factory is not dataclasses.MISSING:
            default = field.default_factory()
        else:
            default = REQUIRED
        found.append((field.name, default))
    assert found == FIELDS[cls]


@pytest.mark.parametrize("cls", [Actum, StateChange], ids=lambda c: c.__name__)
def test_the_types_with_many_fields_are_keyword_only(cls):
    positional = [getattr(INSTANCES[cls], f.name) for f in dataclasses.fields(cls)]
    with pytest.raises(TypeError):
        cls(*positional)


@pytest.mark.parametrize("cls", list(INSTANCES), ids=lambda c: c.__name__)
def test_a_value_cannot_be_changed(cls):
    value = INSTANCES[cls]
    before = repr(value)
    for field in dataclasses.fields(value):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(value, field.name, None)
        with pytest.raises(dataclasses.FrozenInstanceError):
            delattr(value, field.name)
    assert repr(value) == before


@pytest.mark.parametrize("cls", list(INSTANCES), ids=lambda c: c.__name__)
def test_values_are_equal_by_their_fields(cls):
    value = INSTANCES[cls]
    copy = dataclasses.replace(value)
    assert copy == value
    assert copy is not value
    first = dataclasses.fields(value)[0].name
    assert dataclasses.replace(value, **{first: None}) != value


@pytest.mark.parametrize(
    "value",
    [CHRONICUM, Redaction(AT), ActaQuery(kinds=frozenset({ActumKind.MESSAGE})), FILTERS[2]],
    ids=["Chronicum", "Redaction", "ActaQuery", "Filter"],
)
def test_a_value_of_hashable_fields_is_hashable_by_value(value):
    assert hash(dataclasses.replace(value)) == hash(value)
    assert len({value, dataclasses.replace(value)}) == 1


# -- Actum ----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", list(ActumKind))
def test_an_actums_kind_given_as_its_string_becomes_the_member(kind):
    made = actum(kind=kind.value)
    assert made.kind is kind
    assert made == actum(kind=kind)


@pytest.mark.parametrize("actor_kind", list(ActorKind))
def test_an_actums_actor_kind_given_as_its_string_becomes_the_member(actor_kind):
    made = actum(actor_kind=actor_kind.value)
    assert made.actor_kind is actor_kind
    assert made == actum(actor_kind=actor_kind)


def test_an_actums_members_are_kept_as_given():
    made = actum(kind=ActumKind.TOOL_REQUEST, actor_kind=ActorKind.AGENT)
    assert (made.kind, made.actor_kind) == (ActumKind.TOOL_REQUEST, ActorKind.AGENT)
    assert type(made.kind) is ActumKind
    assert type(made.actor_kind) is ActorKind


@pytest.mark.parametrize("value", ["memo", "MESSAGE", " message", 5, None])
def test_an_unknown_kind_is_kept_as_given_for_chronicarius_to_refuse(value):
    made = actum(kind=value, actor_kind=value)
    assert made.kind == value
    assert made.actor_kind == value
    assert not isinstance(made.kind, StrEnum)
    assert not isinstance(made.actor_kind, StrEnum)


def test_an_actums_kind_of_the_other_enum_is_not_taken_for_its_own():
    # "system" is an ActorKind, not an ActumKind: it stays what it was given.
    made = actum(kind=ActorKind.SYSTEM)
    assert made.kind is ActorKind.SYSTEM
    assert not isinstance(made.kind, ActumKind)


def test_an_actum_with_json_data_compares_by_that_data():
    data = {"q": "table for 4", "n": [1, 2.5, None]}
    assert actum(data=data) == actum(data={"q": "table for 4", "n": [1, 2.5, None]})
    assert actum(data=data) != actum(data={"q": "table for 4"})
    assert actum(redacted=Redaction(AT)) != actum(redacted=Redaction(AT, "card number"))


# -- StateChange ----------------------------------------------------------------------


@pytest.mark.parametrize("scope", list(StateScope))
def test_a_state_changes_scope_given_as_its_string_becomes_the_member(scope):
    made = StateChange(namespace="dinner", scope=scope.value)
    assert made.scope is scope
    assert made == StateChange(namespace="dinner", scope=scope)


@pytest.mark.parametrize("value", ["everyone", "OWNER", 3])
def test_an_unknown_scope_is_kept_as_given_for_validation_to_refuse(value):
    made = StateChange(namespace="dinner", scope=value)
    assert made.scope == value
    assert not isinstance(made.scope, StateScope)


# -- RecordedActa ---------------------------------------------------------------------


def test_recorded_acta_is_a_list_of_the_acta_in_write_order():
    first, second = actum(id="a1"), actum(id="a2", content="Yes, 19:30.")
    recorded = RecordedActa(iter([first, second]))
    assert isinstance(recorded, list)
    assert recorded == [first, second]
    assert [a.id for a in recorded] == ["a1", "a2"]
    assert recorded.replayed is False


def test_recorded_acta_is_empty_and_not_replayed_by_default():
    recorded = RecordedActa()
    assert recorded == []
    assert recorded.replayed is False


def test_replayed_is_a_keyword_and_belongs_to_one_answer():
    replay = RecordedActa([actum()], replayed=True)
    fresh = RecordedActa([actum()])
    assert (replay.replayed, fresh.replayed) == (True, False)
    assert replay == fresh == [actum()]  # a list: compared by its acta alone
    with pytest.raises(TypeError):
        RecordedActa([actum()], True)


def test_recorded_tells_a_replay_apart():
    assert Recorded([actum()]) != Recorded([actum()], replayed=True)
    assert Recorded([actum()]) == Recorded([actum()], replayed=False)


# -- pages ----------------------------------------------------------------------------


def test_a_page_without_a_next_page_says_none():
    assert ActaPage([actum()]) == ActaPage([actum()], None)
    assert ChronicaPage([CHRONICUM]) == ChronicaPage([CHRONICUM], None)


@pytest.mark.parametrize("last", [CHRONICUM, None], ids=["more", "last-page"])
def test_chronica_page_next_before_is_deprecated_for_last(last):
    page = ChronicaPage([CHRONICUM], last)
    with pytest.warns(DeprecationWarning, match=r"use ChronicaPage\.last") as caught:
        got = page.next_before
    assert got is last
    assert caught[0].filename == __file__  # the caller's line, not chronica's


def test_next_before_is_no_field_of_a_chronica_page():
    assert [f.name for f in dataclasses.fields(ChronicaPage)] == ["chronica", "last"]
    assert "next_before" in {f.name for f in dataclasses.fields(ActaPage)}


# -- FILTERS --------------------------------------------------------------------------


def test_the_filters_in_their_order():
    assert [(f.field, f.name, f.attribute, f.choices) for f in FILTERS] == [
        ("kinds", "kind", "kind", ActumKind),
        ("actor_kinds", "actor_kind", "actor_kind", ActorKind),
        ("actors", "actor", "actor", None),
    ]
    assert all(f.help for f in FILTERS)


def test_each_filter_is_a_field_of_the_query_and_compares_an_actum_attribute():
    query_fields = {f.name: f for f in dataclasses.fields(ActaQuery)}
    actum_fields = {f.name: f for f in dataclasses.fields(Actum)}
    for f in FILTERS:
        assert query_fields[f.field].default == frozenset(), f.field  # empty: all
        assert f.attribute in actum_fields
        if f.choices is not None:
            assert actum_fields[f.attribute].type in (f.choices, f.choices.__name__)


def test_every_set_field_of_the_query_is_a_filter():
    """A new filter is a field of ActaQuery and a line of FILTERS: neither without the other."""
    sets = {f.name for f in dataclasses.fields(ActaQuery) if f.default == frozenset()}
    assert sets == {f.field for f in FILTERS}


# -- the forgetting records -----------------------------------------------------------


def test_a_redaction_is_when_and_why():
    assert (Redaction(AT).at, Redaction(AT).reason) == (AT, "")
    assert Redaction(AT, "card number").reason == "card number"


def test_an_erasure_keeps_its_counts_by_table():
    erasure = Erasure("ab" * 32, AT, counts={"acta": 12, "chronica": 2})
    assert (erasure.owner_hash, erasure.at, erasure.reason) == ("ab" * 32, AT, "")
    assert dict(erasure.counts) == {"acta": 12, "chronica": 2}
    assert Erasure("ab" * 32, AT).counts == {}
