"""GET /api/chronica/<id>/acta/stream/: server-sent events, served by uvicorn.

A real uvicorn in a thread of the test process (so on the test database) serves the
test project's ASGI application; an HTTP client reads the stream line by line while
the agents write. Under WSGI the same stream works through Django's test client.
"""

from __future__ import annotations

import base64
import http.client
import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator

import pytest
import uvicorn
from django.core.asgi import get_asgi_application
from django.db import connection, connections
from django.test import Client, override_settings

from chronica import Actum, services
from chronica.api import stream as stream_module
from chronica.api.serializers import ActumSerializer
from chronica.stores.listener import listener_threads

from .. import scenario
from ..follow_urls import StreamingChronicumViewSet
from ..scenario import CHRONICUM

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.urls("tests.follow_urls")]

DEADLINE = 60
STREAM = f"/api/chronica/{CHRONICUM}/acta/stream/"


@pytest.fixture(autouse=True)
def fast_polls():
    with override_settings(
        ROOT_URLCONF="tests.follow_urls", CHRONICA={"FOLLOW_POLL_INTERVAL": 0.05}
    ):
        services.reset_chronicarius()
        yield
    services.reset_chronicarius()


@pytest.fixture
def server() -> Iterator[str]:
    """uvicorn serving the test project over ASGI on a free port: its base URL."""
    sock = socket.create_server(("127.0.0.1", 0))
    host, port = sock.getsockname()[:2]
    config = uvicorn.Config(
        get_asgi_application(), lifespan="off", log_level="warning", timeout_graceful_shutdown=5
    )
    uv = uvicorn.Server(config)
    thread = threading.Thread(target=uv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + DEADLINE
    while not uv.started:
        assert thread.is_alive(), "uvicorn did not start"
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.01)
    try:
        yield f"{host}:{port}"
    finally:
        uv.should_exit = True
        thread.join(DEADLINE)
        sock.close()
        connections.close_all()


def basic(user: str) -> dict[str, str]:
    token = base64.b64encode(f"{user}:{user}-password".encode()).decode()
    return {"Authorization": f"Basic {token}"}


class Stream:
    """One client reading a stream: its status, headers, and its events as they come."""

    def __init__(self, server: str, path: str = STREAM, **headers: str) -> None:
        host, port = server.split(":")
        self.connection = http.client.HTTPConnection(host, int(port), timeout=DEADLINE)
        self.connection.request("GET", path, headers={"Accept": "text/event-stream", **headers})
        self.response = self.connection.getresponse()

    def next_event(self) -> dict[str, str]:
        """The next event's fields; comment lines are kept under ``":"``."""
        fields: dict[str, str] = {}
        while True:
            line = self.response.readline().decode()
            assert line, "the stream ended"
            line = line.rstrip("\n")
            if not line:
                if fields:
                    return fields
                continue
            name, _, value = line.partition(":")
            fields[name or ":"] = value.removeprefix(" ")

    def acta(self, n: int) -> list[dict]:
        got = []
        while len(got) < n:
            fields = self.next_event()
            if "data" in fields:
                assert fields["id"] == json.loads(fields["data"])["id"]
                got.append(json.loads(fields["data"]))
        return got

    def close(self) -> None:
        self.connection.close()


def wire(acta: list[Actum]) -> list[dict]:
    return json.loads(json.dumps(ActumSerializer(acta, many=True).data))


def owner(user) -> str:
    return str(user.pk)


def opened(server: str, path: str = STREAM, **headers: str) -> Stream:
    stream = Stream(server, path, **headers)
    assert stream.response.status == 200
    assert stream.response.getheader("Content-Type") == "text/event-stream"
    assert stream.response.getheader("Cache-Control") == "no-cache"
    assert stream.next_event() == {":": "chronica stream"}
    return stream


def test_the_concierge_watches_dinner_friday_as_it_is_recorded(server, ardian):
    first = services.record_actum(owner(ardian), scenario.acta()[0])
    stream = opened(server, **basic("ardian"))
    try:
        # The follower takes its position as the stream starts; give it the moment.
        time.sleep(0.3)
        rest = services.record_acta(owner(ardian), scenario.acta()[1:])
        assert stream.acta(6) == wire(rest)
    finally:
        stream.close()
    assert first not in rest


@pytest.mark.parametrize("how", ["query", "header", "header over query"])
def test_resuming_after_an_actum(server, ardian, how):
    stored = services.record_acta(owner(ardian), scenario.acta())
    headers = basic("ardian")
    path = STREAM
    if how == "query":
        path += f"?after={stored[3].id}"
    elif how == "header":
        headers["Last-Event-ID"] = stored[3].id
    else:
        # An EventSource reconnects to its first URL, with the last ID it saw.
        path += f"?after={stored[0].id}"
        headers["Last-Event-ID"] = stored[3].id
    stream = opened(server, path, **headers)
    try:
        assert stream.acta(3) == wire(stored[4:])
    finally:
        stream.close()


def test_a_backlog_over_the_byte_budget_comes_whole_and_in_order(server, ardian, monkeypatch):
    # Read a budget at a time, every actum once, in order, one larger than the budget
    # too; data as the window gives it.
    from chronica.stores.db import DjangoStore

    reads: list[int] = []
    acta_after = DjangoStore.acta_after

    def counted(*args, **kwargs):
        page = acta_after(*args, **kwargs)
        if page is not None and page[0]:
            reads.append(len(page[0]))
        return page

    monkeypatch.setattr(DjangoStore, "acta_after", counted)
    first = services.record_actum(owner(ardian), scenario.acta()[0])
    backlog = [
        Actum(
            chronicum_id=CHRONICUM,
            kind="tool_response",
            actor_kind="agent",
            actor="search",
            content=f"result {i}",
            data=[[]] * (3000 if i == 3 else 300) + [{"é": [1.0, 1e100, None, "a, b: c"]}],
        )
        for i in range(7)
    ]
    stored = services.record_acta(owner(ardian), backlog)
    with override_settings(CHRONICA={"FOLLOW_POLL_INTERVAL": 0.05, "API_MAX_RESPONSE_BYTES": 2500}):
        stream = opened(server, f"{STREAM}?after={first.id}", **basic("ardian"))
        try:
            got = stream.acta(len(stored))
        finally:
            stream.close()
    assert got == wire(stored)
    assert [a["data"] for a in got] == [a.data for a in backlog]
    assert reads == [2, 1, 1, 2, 1]  # about 950 bytes an actum; the fourth, 9,000


def test_filtered_like_the_window(server, ardian):
    stored = services.record_acta(owner(ardian), scenario.acta())
    stream = opened(
        server, f"{STREAM}?after={stored[0].id}&kind=message&actor_kind=human", **basic("ardian")
    )
    try:
        assert stream.acta(1) == wire([stored[5]])
    finally:
        stream.close()


def test_the_same_404_as_every_route_before_a_byte_is_streamed(server, ardian, rafa):
    services.record_acta(owner(ardian), scenario.acta())
    answers = []
    for path, accept in (
        (STREAM, "text/event-stream"),
        ("/api/chronica/never-existed/acta/stream/", "text/event-stream"),
        (f"/api/chronica/{CHRONICUM}/", "application/json"),
    ):
        stream = Stream(server, path, Accept=accept, **basic("rafa"))
        answers.append(
            (
                stream.response.status,
                stream.response.getheader("Content-Type"),
                stream.response.read(),
            )
        )
        stream.close()
    assert answers[0] == answers[1] == answers[2]
    assert answers[0][:2] == (404, "application/json")


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("?after=no-such-actum", "after='no-such-actum' is not an actum of this chronicum"),
        ("?after=bad%00id", "is not an actum of this chronicum"),
        ("?kind=gossip", "gossip"),
        ("?last_n=3", "unknown query parameter(s): last_n"),
    ],
)
def test_a_bad_query_is_a_400_before_a_byte_is_streamed(server, ardian, query, message):
    services.record_acta(owner(ardian), scenario.acta())
    stream = Stream(server, STREAM + query, **basic("ardian"))
    assert stream.response.status == 400
    assert message in json.loads(stream.response.read())["detail"]
    stream.close()


def test_not_signed_in(server, ardian):
    services.record_acta(owner(ardian), scenario.acta())
    stream = Stream(server)
    assert stream.response.status in (401, 403)
    stream.close()


def test_a_quiet_stream_sends_a_heartbeat(server, ardian, monkeypatch):
    monkeypatch.setattr(StreamingChronicumViewSet, "stream_heartbeat", 0.1)
    services.record_actum(owner(ardian), scenario.acta()[0])
    stream = opened(server, **basic("ardian"))
    try:
        assert stream.next_event() == {":": "heartbeat"}
        reply = services.record_actum(owner(ardian), scenario.booking_reply())
        assert stream.acta(1) == wire([reply])
    finally:
        stream.close()


def test_a_client_that_goes_away_ends_its_stream_and_follower(server, ardian, monkeypatch):
    ended = threading.Event()
    real = stream_module._events

    async def watched(*args, **kwargs) -> AsyncIterator[bytes]:
        try:
            async for chunk in real(*args, **kwargs):
                yield chunk
        finally:
            ended.set()

    monkeypatch.setattr(stream_module, "_events", watched)
    first = services.record_actum(owner(ardian), scenario.acta()[0])
    stream = opened(server, f"{STREAM}?after={first.id}", **basic("ardian"))
    reply = services.record_actum(owner(ardian), scenario.booking_reply())
    assert stream.acta(1) == wire([reply])  # the follower is running
    stream.close()
    assert ended.wait(DEADLINE)
    deadline = time.monotonic() + DEADLINE
    while listener_threads():
        assert time.monotonic() < deadline, "the LISTEN connection outlived its follower"
        time.sleep(0.02)


def test_an_open_stream_holds_no_connection_of_its_request(server, ardian):
    if connection.vendor != "postgresql":
        pytest.skip("counted in pg_stat_activity")
    first = services.record_actum(owner(ardian), scenario.acta()[0])
    streams = [opened(server, f"{STREAM}?after={first.id}", **basic("ardian")) for _ in range(3)]
    try:
        reply = services.record_actum(owner(ardian), scenario.booking_reply())
        for stream in streams:
            assert stream.acta(1) == wire([reply])
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT application_name FROM pg_stat_activity WHERE datname = current_database()"
                " AND pid <> pg_backend_pid()"
            )
            others = sorted(row[0] for row in cursor.fetchall())
    finally:
        for stream in streams:
            stream.close()
    # The LISTEN connection and the one the followers' reads share (asgiref's one
    # thread-sensitive thread): three streams, and their three requests' connections
    # have gone back.
    assert others.count("chronica listener") == 1
    assert len(others) == 2, others


def test_under_wsgi_the_stream_works_and_holds_a_thread(ardian):
    first = services.record_actum(owner(ardian), scenario.acta()[0])
    client = Client()
    client.force_login(ardian)
    response = client.get(f"{STREAM}?after={first.id}")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/event-stream"
    chunks = iter(response.streaming_content)
    try:
        assert next(chunks) == b": chronica stream\n\n"
        reply = services.record_actum(owner(ardian), scenario.booking_reply())
        data = json.loads(next(chunks).decode().split("data: ", 1)[1])
        assert data == wire([reply])[0]
    finally:
        response.close()


def test_under_asgi_open_streams_hold_no_thread_each(server, ardian):
    # Django runs the sync view in a thread of the request's own; a stream that kept
    # it would cost a thread for as long as it stays open.
    services.record_actum(owner(ardian), scenario.acta()[0])
    first = opened(server, **basic("ardian"))
    streams = [first]
    try:
        time.sleep(0.3)
        before = threading.active_count()
        streams += [opened(server, **basic("ardian")) for _ in range(20)]
        time.sleep(0.5)
        grown = threading.active_count() - before
        assert grown < 5, f"{grown} threads more for 20 more streams"
        # And every stream still gets what is written.
        written = services.record_actum(owner(ardian), scenario.acta()[1])
        for stream in streams:
            assert stream.acta(1) == wire([written])
    finally:
        for stream in streams:
            stream.close()
