"""Structured acta and batches over HTTP: the concierge's booking call, with its
call_id and its data, and a whole turn of dinner-friday posted as one array."""

from __future__ import annotations

import pytest
from django.test import override_settings

from chronica import Actum, InvalidActum, services

from .. import scenario
from ..scenario import CHRONICUM
from .test_api import BOOKING_KEY, acta_url, as_ardian, as_rafa, body, chronicum_url, post, window

__all__ = ["as_ardian", "as_rafa"]  # fixtures

CALL = "booking-call-1"
BOOK_TABLE = {
    "type": "function_call",
    "name": "book_table",
    "arguments": {"venue": "Rumah Teduh", "party": 4, "at": "19:00", "quiet": True},
    "reservation_ref": 2**60 + 1,  # beyond what a float holds exactly
}
BOOKED = {"status": "held", "confirmation": "RT-4821", "deposit": 12.5, "notes": None}


def booking_call() -> dict:
    return {
        "kind": "tool_request",
        "actor_kind": "agent",
        "actor": "booking",
        "content": "book_table(Rumah Teduh, 4, 19:00)",
        "call_id": CALL,
        "data": BOOK_TABLE,
    }


def booking_result() -> dict:
    return {
        "kind": "tool_response",
        "actor_kind": "agent",
        "actor": "booking",
        "content": "held, RT-4821",
        "call_id": CALL,
        "data": BOOKED,
    }


def seven() -> list[dict]:
    return [body(actum) for actum in scenario.acta()]


@pytest.mark.django_db
class TestStructuredActa:
    def test_a_tool_call_and_its_result_come_back_as_recorded(self, as_ardian):
        call, result = post(as_ardian, booking_call()), post(as_ardian, booking_result())
        assert call.status_code == result.status_code == 201
        assert (call.json()["call_id"], call.json()["data"]) == (CALL, BOOK_TABLE)
        assert (result.json()["call_id"], result.json()["data"]) == (CALL, BOOKED)
        assert window(as_ardian) == [call.json(), result.json()]

    @pytest.mark.parametrize(
        "data",
        [
            pytest.param({"a": [1, [2, {"b": None}]], "c": {}}, id="nested"),
            pytest.param("Rumah Teduh, table for four", id="bare-string"),
            pytest.param(["ardian", "rafa", "🍷", "Ключ"], id="unicode-list"),
            pytest.param(-(2**63) - 7, id="big-negative-int"),
            pytest.param(0.1, id="float"),
            pytest.param(True, id="true"),
            pytest.param(False, id="false"),
            pytest.param({}, id="empty-object"),
            pytest.param([], id="empty-list"),
            pytest.param(None, id="null"),
        ],
    )
    def test_any_json_value_round_trips(self, as_ardian, data):
        stored = post(as_ardian, {**booking_call(), "data": data})
        assert stored.status_code == 201, stored.content
        assert stored.json()["data"] == data
        assert window(as_ardian)[0]["data"] == data

    def test_data_left_out_reads_back_as_null(self, as_ardian):
        payload = {k: v for k, v in booking_call().items() if k != "data"}
        assert post(as_ardian, payload).json()["data"] is None

    @pytest.mark.parametrize(
        ("payload", "said"),
        [
            pytest.param({**body(scenario.booking_reply()), "call_id": CALL}, "call_id", id="msg"),
            pytest.param({**booking_call(), "call_id": "booking\ncall"}, "call_id", id="newline"),
            pytest.param({**booking_call(), "call_id": 7}, "call_id", id="int"),
            pytest.param({**booking_call(), "data": {"ref": "RT-\x004821"}}, "NUL", id="nul"),
        ],
    )
    def test_what_the_library_refuses_is_a_400_with_its_message(
        self, ardian, as_ardian, payload, said
    ):
        response = post(as_ardian, payload)
        assert response.status_code == 400
        assert said in response.json()["detail"]
        assert as_ardian.get(chronicum_url()).status_code == 404


@pytest.mark.django_db
class TestBatches:
    def test_a_turn_lands_whole_and_in_order(self, as_ardian):
        response = post(as_ardian, [*seven(), booking_call(), booking_result()])
        assert response.status_code == 201
        stored = response.json()
        assert [a["content"] for a in stored[:7]] == [c for *_, c in scenario.SEVEN]
        assert stored[7]["data"] == BOOK_TABLE
        assert window(as_ardian) == stored
        assert len({a["id"] for a in stored}) == 9

    def test_a_batch_of_one_is_a_list_of_one(self, as_ardian):
        response = post(as_ardian, [booking_call()])
        assert response.status_code == 201
        assert window(as_ardian) == response.json()
        assert len(response.json()) == 1

    def test_a_replay_is_200_with_the_first_batch(self, as_ardian):
        first = post(as_ardian, seven(), key=BOOKING_KEY)
        assert first.status_code == 201
        assert "Idempotent-Replayed" not in first.headers
        replay = post(as_ardian, [booking_call()], key=BOOKING_KEY)
        assert replay.status_code == 200
        assert replay.headers["Idempotent-Replayed"] == "true"
        assert replay.json() == first.json()
        assert window(as_ardian) == first.json()

    def test_a_replay_answers_in_the_shape_of_the_request(self, as_ardian):
        batch = post(as_ardian, [booking_call(), booking_result()], key=BOOKING_KEY).json()
        one = post(as_ardian, booking_call(), key=BOOKING_KEY)
        assert (one.status_code, one.json()) == (200, batch[0])
        single = post(as_ardian, booking_call(), key="booking-reply-2").json()
        listed = post(as_ardian, [booking_call()], key="booking-reply-2")
        assert (listed.status_code, listed.json()) == (200, [single])

    def test_one_bad_actum_and_nothing_is_written(self, ardian, as_ardian):
        bad = [*seven(), {**booking_result(), "actor": ""}]
        response = post(as_ardian, bad)
        assert response.status_code == 400
        nameless = Actum(chronicum_id=CHRONICUM, kind="tool_response", actor_kind="agent", actor="")
        with pytest.raises(InvalidActum) as refused:
            services.record_acta(str(ardian.pk), [*scenario.acta(), nameless])
        assert response.json() == {"detail": str(refused.value)}
        assert response.json()["detail"].startswith("actum 7: ")
        assert as_ardian.get(chronicum_url()).status_code == 404

    def test_an_empty_array_writes_and_creates_nothing(self, as_ardian, as_rafa):
        for key in (None, BOOKING_KEY):
            response = post(as_ardian, [], key=key)
            assert (response.status_code, response.json()) == (200, [])
            assert "Idempotent-Replayed" not in response.headers
        assert as_ardian.get(chronicum_url()).status_code == 404
        # The key was not spent on nothing.
        assert post(as_ardian, seven(), key=BOOKING_KEY).status_code == 201
        # And it tells rafa nothing about ardian's chronicum.
        assert post(as_rafa, []).json() == post(as_rafa, [], chronicum_id="never-used").json()

    def test_into_someone_elses_chronicum_is_404_and_writes_nothing(self, as_ardian, as_rafa):
        stored = post(as_ardian, seven()).json()
        response = post(as_rafa, [booking_call(), booking_result()])
        assert response.status_code == 404
        assert response.json() == {"detail": "Not found."}
        assert window(as_ardian) == stored

    @override_settings(CHRONICA={"API_MAX_ACTA": 7})
    def test_a_batch_holds_at_most_api_max_acta(self, as_ardian):
        assert post(as_ardian, seven()).status_code == 201
        response = post(as_ardian, [*seven(), booking_call()])
        assert response.status_code == 400
        assert response.json() == {
            "detail": "a batch holds at most 7 acta (CHRONICA['API_MAX_ACTA']), not 8"
        }
        assert len(window(as_ardian)) == 7

    def test_a_batch_without_the_trailing_slash(self, as_ardian):
        response = as_ardian.post(acta_url().rstrip("/"), seven(), format="json")
        assert response.status_code == 201
        assert window(as_ardian) == response.json()
