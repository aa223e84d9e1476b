"""``chronica.api.asgi.RequestQueue``: at most ``concurrency`` requests in the application
at once, the others waiting their turn; admitted once their body is in, gone once their
answer starts."""

from __future__ import annotations

import asyncio

import pytest

from chronica.api.asgi import RequestQueue


class App:
    """An application that reads its body, works until told, then answers (a stream's
    first bytes, then more)."""

    def __init__(self) -> None:
        self.inside = self.most = self.answered = self.streaming = self.most_streaming = 0
        self.go = asyncio.Event()

    async def __call__(self, scope, receive, send):
        while (await receive()).get("more_body"):
            pass
        self.inside += 1
        self.most = max(self.most, self.inside)
        await self.go.wait()
        self.inside -= 1
        await send({"type": "http.response.start", "status": 200, "headers": []})
        self.answered += 1
        self.streaming += 1
        self.most_streaming = max(self.most_streaming, self.streaming)
        await asyncio.sleep(0.05)  # streaming on
        self.streaming -= 1
        await send({"type": "http.response.body", "body": b"", "more_body": False})


def request(queue: RequestQueue, body_parts: list[asyncio.Event] | None = None):
    async def receive():
        if body_parts:
            await body_parts.pop(0).wait()
            return {"type": "http.request", "body": b"x", "more_body": bool(body_parts)}
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        pass

    return queue({"type": "http", "path": "/api/chronica/", "method": "GET"}, receive, send)


async def test_a_burst_waits_its_turn():
    app = App()
    queue = RequestQueue(app, concurrency=4)
    calls = [asyncio.create_task(request(queue)) for _ in range(50)]
    await asyncio.sleep(0.05)
    assert (app.inside, queue.running, queue.waiting) == (4, 4, 46)
    app.go.set()
    await asyncio.gather(*calls)
    assert (app.most, app.answered) == (4, 50)
    assert (queue.running, queue.waiting) == (0, 0)


async def test_a_slow_body_waits_outside_the_queue():
    app = App()
    queue = RequestQueue(app, concurrency=1)
    first_part = asyncio.Event()  # never sent
    slow = asyncio.create_task(request(queue, [first_part, asyncio.Event()]))
    fast = asyncio.create_task(request(queue))
    await asyncio.sleep(0.05)
    assert (app.inside, queue.running, queue.waiting) == (1, 1, 0)  # the fast one
    app.go.set()
    await fast
    slow.cancel()


async def test_an_answer_that_starts_frees_its_slot():
    app = App()
    app.go.set()
    queue = RequestQueue(app, concurrency=1)
    await asyncio.gather(*(request(queue) for _ in range(10)))
    # Each held its slot until its answer started, not while it streamed: one at a
    # time in the application, several streaming side by side.
    assert (app.most, app.answered) == (1, 10)
    assert app.most_streaming > 1


def test_a_concurrency_below_one_is_refused():
    with pytest.raises(ValueError, match="concurrency"):
        RequestQueue(App(), concurrency=0)
