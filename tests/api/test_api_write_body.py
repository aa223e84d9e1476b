"""How the API reads a write's body: ``ActumWriteSerializer`` reads it from its fields'
own ``required`` and ``default`` without making the fields a request; what it reads
is what DRF's loop over those fields reads, errors and their codes included."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rest_framework import serializers
from rest_framework.exceptions import ValidationError

from chronica.api.serializers import ActumWriteSerializer, _reading

NAMES = ["kind", "actor_kind", "actor", "content", "call_id", "data", "id", "at"]
VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.text(max_size=5),
    st.sampled_from(["message", "agent", "human", ""]),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


def _read(reader: Any, body: dict[str, Any], agent: bool) -> tuple[str, Any]:
    serializer = ActumWriteSerializer(data=body, context={"chronicum_id": "x", "agent": agent})
    try:
        attrs = reader(serializer, body)
    except ValidationError as exc:
        return "refused", {k: [(str(e), e.code) for e in v] for k, v in exc.detail.items()}
    return "read", attrs


def _drf(serializer: ActumWriteSerializer, body: dict[str, Any]) -> Any:
    attrs = serializers.Serializer.to_internal_value(serializer, body)
    serializers.Serializer.run_validators(serializer, attrs)
    return dict(attrs)


def _chronica(serializer: ActumWriteSerializer, body: dict[str, Any]) -> Any:
    attrs = serializer.to_internal_value(body)
    serializer.run_validators(attrs)
    return attrs


@settings(max_examples=300, deadline=None)
@given(body=st.dictionaries(st.sampled_from(NAMES), VALUES), agent=st.booleans())
def test_a_body_is_read_as_drfs_loop_over_the_fields_reads_it(body, agent):
    assert _read(_chronica, body, agent) == _read(_drf, body, agent)


@pytest.mark.parametrize("agent", [False, True])
def test_nothing_is_left_to_the_fields_it_does_not_make(agent):
    """The reader skips DRF's look for read-only fields with a default and its
    validators: there are none to find."""
    serializer = ActumWriteSerializer(context={"chronicum_id": "x", "agent": agent})
    assert serializer.validators == []
    assert not any(field.read_only for field in serializer.fields.values())
    # The reading is taken from the fields (none judges its value), not DRF's loop:
    # otherwise the differential test above would hold DRF's loop to itself.
    assert _reading(ActumWriteSerializer, agent) is not None


def test_the_missing_required_fields_are_named_in_order():
    _, refused = _read(_chronica, {"content": "Held."}, agent=False)
    assert refused == {
        name: [("This field is required.", "required")] for name in ("kind", "actor_kind", "actor")
    }
    assert _read(_chronica, {"kind": "message"}, agent=True) == (
        "read",
        {"kind": "message", "content": "", "call_id": "", "data": None},
    )


def test_the_required_message_is_in_the_language_of_the_request():
    """The message is DRF's lazy one, translated when a body is read, as DRF's field
    translates it (the first body read does not fix the language)."""
    from django.utils import translation

    _read(_chronica, {}, agent=False)
    with translation.override("de"):
        german = _read(_chronica, {}, agent=False)
        assert german == _read(_drf, {}, agent=False)
    assert german[1]["kind"][0][0] == "Dieses Feld ist zwingend erforderlich."


def test_a_subclass_whose_field_judges_its_value_is_read_by_drfs_loop():
    """A project's subclass may give a field that refuses values (a ``CharField`` with
    ``max_length``): its body is read by DRF's loop over the fields, which runs it."""

    class Shorter(ActumWriteSerializer):
        def get_fields(self) -> dict[str, serializers.Field]:  # type: ignore[type-arg]
            fields = super().get_fields()
            fields["actor"] = serializers.CharField(max_length=3)
            return fields

    body = {"kind": "message", "actor_kind": "agent", "actor": "booking"}
    serializer = Shorter(data=body, context={"chronicum_id": "x", "agent": False})
    assert not serializer.is_valid()
    assert serializer.errors["actor"][0].code == "max_length"
