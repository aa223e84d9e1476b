"""ChronicaMemoryService: Google ADK's BaseMemoryService on chronica's search.

``TestContract`` holds the cases of ADK's own memory-service tests
(``tests/unittests/memory/test_in_memory_memory_service.py`` of google/adk-python)
and runs them on ADK's InMemoryMemoryService and on chronica alike (on the in-memory
store and on DjangoStore). Adapted as the session tests are: a session is created and
its events appended through the session service (ADK's, or ChronicaSessionService,
which is where chronica's memory comes from), then added to memory; assertions on a
service's private dicts become searches. Then a Runner with ADK's ``load_memory`` tool
and a scripted model recalls a fact from an earlier session of the same user.
"""

from __future__ import annotations

import logging
import unicodedata
from collections.abc import AsyncGenerator
from typing import Any

import pytest
from google.adk.agents import LlmAgent
from google.adk.events.event import Event
from google.adk.memory import InMemoryMemoryService
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService, Session
from google.adk.tools import load_memory
from google.genai import types
from pydantic import Field

from chronica.integrations.google_adk import ChronicaMemoryService, ChronicaSessionService

from .scenario import STORES, run, using

pytestmark = pytest.mark.django_db(transaction=True)

APP = "test-app"
USER = "test-user"
OTHER = "another-user"


class Services:
    """A session service and the memory service that goes with it."""

    def __init__(self, sessions: Any, memory: Any, name: str) -> None:
        self.sessions, self.memory, self.name = sessions, memory, name

    def add(
        self, session_id: str, texts: list[str | None], *, user: str = USER, app: str = APP
    ) -> Session:
        """A session of ``texts`` (``None``: an event with no content), added to memory."""

        async def make() -> Session:
            session = await self.sessions.create_session(
                app_name=app, user_id=user, session_id=session_id
            )
            for i, text in enumerate(texts):
                content = None if text is None else types.Content(parts=[types.Part(text=text)])
                event = Event(
                    id=f"event-{session_id}-{i}",
                    invocation_id=f"inv-{i}",
                    author="user" if i % 2 == 0 else "model",
                    timestamp=12345 + i,
                    content=content,
                )
                await self.sessions.append_event(session, event)
            session = await self.sessions.get_session(
                app_name=app, user_id=user, session_id=session_id
            )
            await self.memory.add_session_to_memory(session)
            return session

        return run(make)()

    def search(self, query: str, *, user: str = USER, app: str = APP) -> list[str]:
        found = run(self.memory.search_memory)(app_name=app, user_id=user, query=query)
        return [m.content.parts[0].text for m in found.memories]

    def memories(self, query: str, *, user: str = USER) -> list[Any]:
        return run(self.memory.search_memory)(app_name=APP, user_id=user, query=query).memories


@pytest.fixture(params=["adk-in-memory", *STORES])
def services(request: pytest.FixtureRequest):
    if request.param == "adk-in-memory":
        yield Services(InMemorySessionService(), InMemoryMemoryService(), "adk")
        return
    with using(request.param):
        yield Services(ChronicaSessionService(), ChronicaMemoryService(), request.param)


ADK_1 = "The ADK is a great toolkit."
ADK_2 = "I agree. The Agent Development Kit (ADK) rocks!"
PYTHON = "I like to code in Python."
SECRET = "This is a secret."


@pytest.fixture
def two_sessions(services):
    services.add("session-1", [ADK_1, None, ADK_2])
    services.add("session-2", [PYTHON])
    return services


class TestContract:
    def test_search_memory_simple_match(self, two_sessions):
        assert two_sessions.search("Python") == [PYTHON]
        (memory,) = two_sessions.memories("Python")
        assert memory.author == "user"
        assert memory.id == "event-session-2-0"
        assert memory.timestamp.startswith("1970-01-01T03:25:45")

    def test_search_memory_case_insensitive_match(self, two_sessions):
        assert two_sessions.search("development") == [ADK_2]

    def test_search_memory_multiple_matches(self, two_sessions):
        """Several keywords: any of them matches."""
        assert set(two_sessions.search("How about ADK?")) == {ADK_1, ADK_2}

    def test_search_memory_no_match(self, two_sessions):
        assert two_sessions.search("nonexistent") == []

    def test_an_empty_query_finds_nothing(self, two_sessions):
        assert two_sessions.search("") == []
        assert two_sessions.search("  ?! ") == []

    def test_search_memory_is_scoped_by_user(self, services):
        services.add("session-1", [ADK_1])
        services.add("session-3", [SECRET], user=OTHER)
        assert services.search("secret") == []
        assert services.search("secret", user=OTHER) == [SECRET]

    def test_search_memory_is_scoped_by_app(self, services):
        services.add("session-1", [SECRET], app="other-app")
        assert services.search("secret") == []
        assert services.search("secret", app="other-app") == [SECRET]

    def test_search_memory_does_not_collide_on_slash_in_identifiers(self, services):
        services.add("session-slashed-app", [SECRET], app="app/other-user", user="user")
        assert services.search("secret", app="app", user="other-user/user") == []

    def test_add_session_with_no_events_to_memory(self, services):
        services.add("session-4", [])
        assert services.search("anything") == []

    def test_a_session_added_twice_is_found_once(self, services):
        session = services.add("session-1", [PYTHON])
        run(services.memory.add_session_to_memory)(session)
        assert services.search("python") == [PYTHON]

    def test_search_memory_ranks_by_number_of_matching_words(self, services):
        services.add(
            "session-ranked",
            ["The deploy is ready.", "Ready.", "The deploy status is ready."],
        )
        assert services.search("deploy status ready") == [
            "The deploy status is ready.",
            "The deploy is ready.",
            "Ready.",
        ]

    def test_search_memory_returns_at_most_ten_memories(self, services):
        texts = [f"note {i} about work" for i in range(20)] + ["the backlog note about work"]
        services.add("session-many", texts)
        found = services.search("work backlog note")
        assert len(found) == 10
        assert found[0] == "the backlog note about work"
        # (the rest tie; ADK keeps the order they were added in, chronica the search rank)
        assert set(found[1:]) <= set(texts)

    def test_retrieved_memories_do_not_mutate_storage(self, services):
        services.add("session", ["I prefer jasmine tea."])
        first = services.memories("jasmine")
        first[0].content.parts.clear()
        assert services.search("jasmine") == ["I prefer jasmine tea."]

    @pytest.mark.parametrize(
        ("text", "query", "count"),
        [
            ("제 이름은 민수입니다", "민수입니다", 1),
            ("Меня зовут Алексей", "Алексей", 1),
            ("太郎 works at ABC Corp", "ABC", 1),
            ("I like to code in Python.", "thon", 0),
            (unicodedata.normalize("NFD", "Meet at the Café"), "Café", 1),
            ("Meet at the Café", unicodedata.normalize("NFD", "Café"), 1),
        ],
    )
    def test_search_memory_non_latin(self, services, text, query, count):
        services.add("session-i18n", [text])
        assert len(services.search(query)) == count


def test_the_documented_difference_words_inside_unspaced_scripts(services):
    """ADK's in-memory service finds 太郎 inside 私の名前は太郎です by substring; the
    databases' word splitters (PostgreSQL's parser, FTS5's unicode61) keep a run of
    Japanese or Chinese as one word, so chronica finds only the whole run."""
    services.add("session-ja", ["私の名前は太郎です"])
    found = services.search("太郎")
    assert found == (["私の名前は太郎です"] if services.name == "adk" else [])
    assert services.search("私の名前は太郎です") == ["私の名前は太郎です"]


# -- a Runner recalls an earlier session ------------------------------------------------


class ScriptedLlm(BaseLlm):
    """A model that answers each request with the next part of its script, and keeps
    what each request held."""

    script: list[types.Part] = Field(default_factory=list)
    seen: list[str] = Field(default_factory=list)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self.seen.append(
            " ".join(
                str(part.function_response.response)
                for content in llm_request.contents
                for part in content.parts or []
                if part.function_response is not None
            )
        )
        yield LlmResponse(content=types.Content(role="model", parts=[self.script.pop(0)]))


def _concierge(model: ScriptedLlm) -> LlmAgent:
    return LlmAgent(name="concierge", model=model, tools=[load_memory])


async def _turn(runner: Runner, user: str, session_id: str, text: str) -> list[Event]:
    message = types.Content(role="user", parts=[types.Part(text=text)])
    return [
        event
        async for event in runner.run_async(
            user_id=user, session_id=session_id, new_message=message
        )
    ]


@pytest.mark.parametrize("store", STORES)
def test_a_runner_recalls_the_same_users_earlier_session_and_never_anothers(store):
    logging.getLogger("google_adk").setLevel(logging.ERROR)

    async def scenario() -> tuple[ScriptedLlm, ScriptedLlm]:
        sessions, memory = ChronicaSessionService(), ChronicaMemoryService()

        def runner(model: ScriptedLlm) -> Runner:
            return Runner(
                app_name="dinner",
                agent=_concierge(model),
                session_service=sessions,
                memory_service=memory,
            )

        # Monday: ardian books; rafa, another user, booked elsewhere.
        for user, fact in (
            ("ardian", "Booked Rumah Teduh in Kemang, confirmation RT-4821."),
            ("rafa", "Booked Kayu Manis in Kemang, confirmation KM-1177."),
        ):
            model = ScriptedLlm(model="scripted", script=[types.Part(text=fact)])
            monday = await sessions.create_session(app_name="dinner", user_id=user)
            await _turn(runner(model), user, monday.id, "Book us a table in Kemang.")
            await memory.add_session_to_memory(
                await sessions.get_session(app_name="dinner", user_id=user, session_id=monday.id)
            )

        # Friday, a new session: each asks what was booked; the model loads memory.
        answers = []
        for user in ("ardian", "rafa"):
            model = ScriptedLlm(
                model="scripted",
                script=[
                    types.Part(
                        function_call=types.FunctionCall(
                            name="load_memory", args={"query": "Kemang confirmation"}
                        )
                    ),
                    types.Part(text="Here is what I found."),
                ],
            )
            friday = await sessions.create_session(app_name="dinner", user_id=user)
            await _turn(runner(model), user, friday.id, "What did we book in Kemang?")
            answers.append(model)
        return answers[0], answers[1]

    with using(store):
        ardian, rafa = run(scenario)()
    assert "RT-4821" in ardian.seen[-1]
    assert "KM-1177" not in ardian.seen[-1]
    assert "KM-1177" in rafa.seen[-1]
    assert "RT-4821" not in rafa.seen[-1]
