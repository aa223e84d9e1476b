"""A reply whose outcome the agent could not see lands exactly once.

The booking agent's write of its reply loses the connection around the commit: it
gets a DatabaseError and cannot tell whether the reply landed. It retries with
the same idempotency key (its model reworded the reply meanwhile) and the reply
is in the chronicum exactly once. The cut is real: Django talks to PostgreSQL
through a small TCP proxy that drops the connection either before the server sees
the INSERT, or after the server has committed it but before the answer comes back.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading

import pytest
from django.db import DatabaseError, connection

from chronica import services

from .. import scenario
from ..scenario import BOOKING_REPLY, BOOKING_REPLY_REWORDED, CHRONICUM, OWNER

pytestmark = pytest.mark.django_db(transaction=True)

KEY = "booking-reply-1"


class CuttingProxy:
    """Forwards PostgreSQL connections; ``cut(mode)`` drops the next one that writes an actum.

    ``"before"``: dropped before the INSERT reaches the server (nothing lands).
    ``"after"``: the INSERT runs and commits, then the connection is dropped when
    the server says it is ready again, so the answer never reaches the client.
    """

    # A write with a key is one statement; one without calls a function.
    MARKERS = (b"INSERT INTO acta", b"chronica_record_act")

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.lock = threading.Lock()
        self.mode: str | None = None
        self.cuts: list[str] = []
        self.done = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def cut(self, mode: str) -> None:
        with self.lock:
            self.mode = mode
            self.done.clear()

    def close(self) -> None:
        self.listener.close()

    def _take_cut(self) -> str | None:
        with self.lock:
            mode, self.mode = self.mode, None
            return mode

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.target)
            swallow = threading.Event()
            threading.Thread(target=self._up, args=(client, server, swallow), daemon=True).start()
            threading.Thread(target=self._down, args=(client, server, swallow), daemon=True).start()

    def _drop(self, client: socket.socket, server: socket.socket, mode: str) -> None:
        for sock in (client, server):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
        self.cuts.append(mode)
        self.done.set()

    def _up(self, client: socket.socket, server: socket.socket, swallow: threading.Event) -> None:
        try:
            while data := client.recv(65536):
                if any(m in data for m in self.MARKERS) and (mode := self._take_cut()):
                    if mode == "before":
                        self._drop(client, server, mode)
                        return
                    swallow.set()
                server.sendall(data)
            server.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def _down(self, client: socket.socket, server: socket.socket, swallow: threading.Event) -> None:
        answer = b""
        try:
            while data := server.recv(65536):
                if not swallow.is_set():
                    client.sendall(data)
                    continue
                answer += data
                if ready_for_query(answer):
                    # The autocommit statement is committed once the server is ready again.
                    self._drop(client, server, "after")
                    return
        except OSError:
            pass
        finally:
            client.close()
            server.close()


def ready_for_query(stream: bytes) -> bool:
    """Whether the server's messages in ``stream`` include ReadyForQuery ('Z')."""
    at = 0
    while at + 5 <= len(stream):
        kind, length = stream[at : at + 1], struct.unpack("!I", stream[at + 1 : at + 5])[0]
        if kind == b"Z":
            return True
        at += 1 + length
    return False


@pytest.fixture
def proxy(monkeypatch):
    if connection.vendor != "postgresql":
        pytest.skip("SQLite has no network connection to cut around a commit")
    settings = connection.settings_dict
    proxy = CuttingProxy(settings["HOST"] or "127.0.0.1", int(settings["PORT"] or 5432))
    connection.close()
    monkeypatch.setitem(settings, "HOST", "127.0.0.1")
    monkeypatch.setitem(settings, "PORT", str(proxy.port))
    # The proxy reads the protocol, so it must stay in clear text.
    monkeypatch.setitem(settings, "OPTIONS", {**settings.get("OPTIONS", {}), "sslmode": "disable"})
    services.reset_chronicarius()
    yield proxy
    services.reset_chronicarius()
    connection.close()
    proxy.close()


def reply_acta() -> list:
    return [
        a
        for a in services.get_acta(OWNER, CHRONICUM)
        if a.content in (BOOKING_REPLY, BOOKING_REPLY_REWORDED)
    ]


@pytest.mark.parametrize(
    ("cut", "landed"),
    [("before", BOOKING_REPLY_REWORDED), ("after", BOOKING_REPLY)],
    ids=["cut-before-the-server-saw-it", "cut-after-the-server-committed-it"],
)
def test_a_retried_reply_lands_exactly_once(proxy, cut, landed):
    dinner = [services.record_actum(OWNER, a) for a in scenario.acta()]

    proxy.cut(cut)
    with pytest.raises(DatabaseError):
        services.record_actum(OWNER, scenario.booking_reply(), idempotency_key=KEY)
    assert proxy.done.wait(10), "the proxy never cut the connection"
    assert proxy.cuts == [cut]

    retried = services.record_actum(
        OWNER, scenario.booking_reply(BOOKING_REPLY_REWORDED), idempotency_key=KEY
    )
    again = services.record_actum(
        OWNER, scenario.booking_reply(BOOKING_REPLY_REWORDED), idempotency_key=KEY
    )

    assert retried.content == landed
    assert again == retried
    assert reply_acta() == [retried]
    assert services.get_acta(OWNER, CHRONICUM) == [*dinner, retried]


def test_without_a_key_the_agent_cannot_tell(proxy):
    """Why the key matters: a plain retry after a cut-after-commit writes the reply twice."""
    services.record_actum(OWNER, scenario.acta()[0])

    proxy.cut("after")
    with pytest.raises(DatabaseError):
        services.record_actum(OWNER, scenario.booking_reply())
    services.record_actum(OWNER, scenario.booking_reply())

    assert [a.content for a in reply_acta()] == [BOOKING_REPLY, BOOKING_REPLY]
