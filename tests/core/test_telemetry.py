"""chronica[otel]: one span per public call, named per the GenAI memory conventions.

The SDK's TracerProvider is global and can be set only once per process: one provider
for the session (or the one something else set first), an InMemorySpanExporter on it,
cleared before each test, and only the spans of the ``chronica`` tracer looked at.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from asgiref.sync import sync_to_async
from django.db import connections
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from chronica import Actum, ChronicumNotFound, services
from chronica.services import Chronicarius
from chronica.stores.memory import InMemoryStore

from ..scenario import CHRONICUM, OWNER

SECRET = "Book Rumah Teduh for four at 7pm on Friday under Ardian."


@pytest.fixture(scope="session")
def exporter() -> InMemorySpanExporter:
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return exporter


@pytest.fixture
def spans(exporter: InMemorySpanExporter):
    """The spans of chronica's tracer ended since the test began."""
    exporter.clear()

    def finished() -> list[ReadableSpan]:
        return [
            span
            for span in exporter.get_finished_spans()
            if span.instrumentation_scope is not None
            and span.instrumentation_scope.name == "chronica"
        ]

    yield finished
    exporter.clear()


@pytest.fixture(autouse=True)
def fresh_chronicarius():
    services.reset_chronicarius()
    yield
    services.reset_chronicarius()


def actum(content: str = SECRET) -> Actum:
    return Actum(
        chronicum_id=CHRONICUM,
        kind="message",
        content=content,
        actor_kind="agent",
        actor="concierge",
    )


def only(spans) -> ReadableSpan:
    finished = spans()
    assert len(finished) == 1, [span.name for span in finished]
    return finished[0]


@pytest.mark.django_db(transaction=True)
class TestOneSpanPerCall:
    def test_a_write(self, spans):
        services.record_actum(OWNER, actum())
        span = only(spans)
        assert span.name == "update_memory chronica"
        assert span.attributes["gen_ai.operation.name"] == "update_memory"
        assert span.attributes["gen_ai.memory.store.id"] == "chronica"
        assert span.attributes["gen_ai.conversation.id"] == CHRONICUM
        assert span.attributes["chronica.method"] == "record_actum"
        assert span.status.status_code is StatusCode.UNSET

    def test_a_window(self, spans):
        services.record_acta(OWNER, [actum("one"), actum("two")])
        services.get_acta(OWNER, CHRONICUM)
        finished = spans()
        assert [span.name for span in finished] == [
            "update_memory chronica",
            "search_memory chronica",
        ]
        window = finished[1]
        assert window.attributes["gen_ai.operation.name"] == "search_memory"
        assert window.attributes["gen_ai.conversation.id"] == CHRONICUM
        assert window.attributes["gen_ai.memory.search.result.count"] == 2

    def test_a_delete(self, spans):
        services.create_chronicum(OWNER, CHRONICUM)
        services.delete_chronicum(OWNER, CHRONICUM)
        names = [span.name for span in spans()]
        assert names == ["update_memory chronica", "delete_memory chronica"]
        delete = spans()[1]
        assert delete.attributes["gen_ai.operation.name"] == "delete_memory"
        assert delete.attributes["gen_ai.conversation.id"] == CHRONICUM

    def test_the_owner_is_not_recorded(self, spans):
        services.record_actum(OWNER, actum())
        services.get_acta(OWNER, CHRONICUM)
        for span in spans():
            assert OWNER not in repr(dict(span.attributes))

    def test_content_is_absent_by_default(self, spans):
        services.record_actum(OWNER, actum())
        services.get_acta(OWNER, CHRONICUM)
        for span in spans():
            assert "gen_ai.memory.content" not in span.attributes
            assert SECRET not in repr(dict(span.attributes))

    def test_content_is_present_with_the_setting(self, spans, settings):
        settings.CHRONICA = {"OTEL_RECORD_CONTENT": True}
        services.record_actum(OWNER, actum())
        services.get_acta(OWNER, CHRONICUM)
        write, window = spans()
        assert SECRET in write.attributes["gen_ai.memory.content"]
        assert SECRET in window.attributes["gen_ai.memory.content"]
        services.get_acta_page(OWNER, CHRONICUM)
        page = spans()[-1]
        assert page.attributes["gen_ai.memory.search.result.count"] == 1
        assert SECRET in page.attributes["gen_ai.memory.content"]

    def test_an_error_is_an_error_span_and_the_same_exception(self, spans):
        with pytest.raises(ChronicumNotFound) as raised:
            services.get_acta(OWNER, "no-such-chronicum")
        span = only(spans)
        assert span.status.status_code is StatusCode.ERROR
        assert span.attributes["error.type"] == "ChronicumNotFound"
        assert span.attributes["gen_ai.conversation.id"] == "no-such-chronicum"
        [event] = span.events
        assert event.name == "exception"
        assert event.attributes["exception.type"] == "chronica.errors.ChronicumNotFound"
        assert type(raised.value) is ChronicumNotFound


@pytest.mark.django_db(transaction=True)
class TestAsync:
    @pytest.fixture(autouse=True)
    async def close_executor_connections(self):
        yield
        await sync_to_async(connections.close_all)()

    async def test_an_async_twin_is_one_span(self, spans):
        await services.arecord_actum(OWNER, actum())
        await services.aget_acta(OWNER, CHRONICUM)
        finished = spans()
        assert [span.attributes["chronica.method"] for span in finished] == [
            "arecord_actum",
            "aget_acta",
        ]

    async def test_an_async_error(self, spans):
        with pytest.raises(ChronicumNotFound):
            await services.adelete_chronicum(OWNER, "no-such-chronicum")
        span = only(spans)
        assert span.name == "delete_memory chronica"
        assert span.status.status_code is StatusCode.ERROR


def test_a_method_calling_another_is_one_span(spans):
    chronicarius = Chronicarius(InMemoryStore())
    chronicarius.record_actum(OWNER, actum())  # record_actum calls record_acta
    assert only(spans).attributes["chronica.method"] == "record_actum"
    chronicarius.acting_as(None).pop_actum(OWNER, CHRONICUM)
    assert [span.name for span in spans()][-1] == "delete_memory chronica"


def test_the_setting_is_checked(settings):
    from chronica.checks import check_settings

    settings.CHRONICA = {"OTEL_RECORD_CONTENT": "yes"}
    assert [e.id for e in check_settings()] == ["chronica.E018"]
    settings.CHRONICA = {"OTEL_RECORD_CONTENT": True}
    assert check_settings() == []


def test_chronica_works_without_opentelemetry():
    """A meta path finder refuses every opentelemetry module: chronica imports, records
    and reads, and traces nothing."""
    program = textwrap.dedent(
        """
        import sys

        class Refuse:
            def find_spec(self, name, path=None, target=None):
                if name == "opentelemetry" or name.startswith("opentelemetry."):
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)
                return None

        sys.meta_path.insert(0, Refuse())
        from chronica import Actum, telemetry
        from chronica.services import Chronicarius
        from chronica.stores.memory import InMemoryStore

        assert not telemetry.enabled()
        chronicarius = Chronicarius(InMemoryStore())
        assert not hasattr(Chronicarius.record_actum, "_chronica_traced")
        hi = Actum(chronicum_id="c", kind="message", content="hi", actor_kind="human", actor="o")
        chronicarius.record_actum("o", hi)
        assert [a.content for a in chronicarius.get_acta("o", "c")] == ["hi"]
        assert not any(name.startswith("opentelemetry") for name in sys.modules)
        print("ok")
        """
    )
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root), "DJANGO_SETTINGS_MODULE": "tests.settings"}
    result = subprocess.run(
        [sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_without_an_sdk_a_call_starts_no_span_until_one_is_set_up():
    """The API alone (no SDK's provider yet): chronica's calls ask its tracer for no span
    (it would record nothing); a provider set up afterwards gets every call's span."""
    program = textwrap.dedent(
        """
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
            InMemorySpanExporter,
        )

        from chronica import Actum
        from chronica.services import Chronicarius
        from chronica.stores.memory import InMemoryStore

        asked = []
        start_span = trace.ProxyTracer.start_span

        def counted(self, *args, **kwargs):
            asked.append(args[0])
            return start_span(self, *args, **kwargs)

        trace.ProxyTracer.start_span = counted
        chronicarius = Chronicarius(InMemoryStore())
        hi = Actum(chronicum_id="c", kind="message", content="hi", actor_kind="human", actor="o")
        chronicarius.record_actum("o", hi)
        assert [a.content for a in chronicarius.get_acta("o", "c")] == ["hi"]
        assert asked == [], asked

        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)
        chronicarius.get_acta("o", "c")
        assert [s.name for s in exporter.get_finished_spans()] == ["search_memory chronica"]
        print("ok")
        """
    )
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root), "DJANGO_SETTINGS_MODULE": "tests.settings"}
    env.pop("OTEL_PYTHON_TRACER_PROVIDER", None)
    result = subprocess.run(
        [sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_a_deprecation_warning_still_names_the_caller(spans):
    chronicarius = Chronicarius(InMemoryStore())
    with pytest.warns(DeprecationWarning, match="list_namespace") as warned:
        chronicarius.list_namespace("dinner", owner_id=OWNER)
    assert warned[0].filename == __file__
    with pytest.warns(DeprecationWarning, match="record") as warned:
        chronicarius.record(OWNER, [actum()])
    assert warned[0].filename == __file__
    assert [span.attributes["chronica.method"] for span in spans()] == [
        "list_namespace",
        "record_acta",
    ]
