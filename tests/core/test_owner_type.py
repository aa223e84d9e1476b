"""An owner that is not a string (a user's ``int`` pk) is a ``TypeError`` that says so,
still the ``InvalidActum`` / ``InvalidQuery`` the rules name; nothing is written."""

from __future__ import annotations

from typing import Any

import pytest

from chronica import Actum, InvalidActum, InvalidQuery, services
from chronica.errors import OwnerIDNotAString

pytestmark = pytest.mark.django_db

ASK = Actum(chronicum_id="dinner", kind="message", actor_kind="human", actor="a", content="hi")

CALLS = {
    "record_actum": lambda owner: services.record_actum(owner, ASK),
    "record_acta": lambda owner: services.record_acta(owner, [ASK]),
    "create_chronicum": lambda owner: services.create_chronicum(owner),
    "get_acta": lambda owner: services.get_acta(owner, "dinner"),
    "get_chronicum": lambda owner: services.get_chronicum(owner, "dinner"),
    "list_chronica": lambda owner: services.list_chronica(owner),
    "delete_chronicum": lambda owner: services.delete_chronicum(owner, "dinner"),
}


@pytest.mark.parametrize("call", CALLS, ids=list(CALLS))
@pytest.mark.parametrize("owner", [1, 1.0, b"1", ["1"]], ids=["int", "float", "bytes", "list"])
def test_an_owner_that_is_no_string_is_a_type_error(call: str, owner: Any) -> None:
    with pytest.raises(TypeError, match=rf"owner_id must be a string, not {type(owner).__name__}"):
        CALLS[call](owner)
    assert list(services.list_chronica("1")) == []


def test_it_is_still_the_error_the_rules_name() -> None:
    assert issubclass(OwnerIDNotAString, InvalidActum)
    assert issubclass(OwnerIDNotAString, InvalidQuery)
    with pytest.raises(InvalidActum):
        services.record_actum(1, ASK)  # type: ignore[arg-type]
    with pytest.raises(InvalidQuery):
        services.get_acta(1, "dinner")  # type: ignore[arg-type]


def test_the_message_says_what_to_pass() -> None:
    with pytest.raises(TypeError, match=r"owner_id_for\(user\)"):
        services.record_actum(1, ASK)  # type: ignore[arg-type]
