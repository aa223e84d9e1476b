"""Retention: a team keeps tool outputs 30 days and sessions a year; the rules run
themselves, a batch at a time, beside writers; a malformed rule is a check error."""

from __future__ import annotations

import datetime as dt
import threading
from io import StringIO

import pytest
from django.core.checks import run_checks
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connections

from chronica import models, services
from chronica.validation.retention import parse_rules

from .. import scenario
from ..scenario import CHRONICUM, OWNER

pytestmark = pytest.mark.django_db(transaction=True)

RULES = [
    {"older_than": "30d", "kinds": ["tool_response", "tool_request"], "action": "redact"},
    {"older_than": "365d", "action": "delete"},
]


def aged(chronicum_id: str, days: int) -> None:
    """Acta and chronicum as if written ``days`` ago."""
    then = dt.datetime.now(dt.UTC) - dt.timedelta(days=days)
    models.Actum.objects.filter(chronicum_id=chronicum_id).update(at=then)
    models.Chronicum.objects.filter(id=chronicum_id).update(last_activity_at=then)


@pytest.fixture
def sessions():
    for name, days in (("last-year", 400), ("last-month", 40), ("today", 0)):
        services.record_acta(OWNER, scenario.acta(f"{CHRONICUM}-{name}"))
        aged(f"{CHRONICUM}-{name}", days)


def test_rules_redact_old_tool_acta_and_delete_old_sessions(settings, sessions):
    settings.CHRONICA = {"RETENTION": RULES}
    planned = services.apply_retention(dry_run=True)
    assert planned == {
        "redact tool_request,tool_response older than 30d": {"acta": 4},
        "delete older than 365d": {"chronica": 1, "acta": 7},
    }
    assert models.Actum.objects.filter(redacted_at__isnull=False).count() == 0
    done = services.apply_retention()
    assert done == planned
    month = services.get_acta(OWNER, f"{CHRONICUM}-last-month")
    assert [a.redacted is not None for a in month] == [
        False,
        False,
        True,
        True,
        False,
        False,
        False,
    ]
    assert month[2].redacted.reason == "retention: redact tool_request,tool_response older than 30d"
    assert month[3].content == ""
    assert all(a.redacted is None for a in services.get_acta(OWNER, f"{CHRONICUM}-today"))
    assert not models.Chronicum.objects.filter(id=f"{CHRONICUM}-last-year").exists()
    # A second run finds nothing more to do.
    assert services.apply_retention() == {
        "redact tool_request,tool_response older than 30d": {"acta": 0},
        "delete older than 365d": {"chronica": 0, "acta": 0},
    }


def test_small_batches_do_the_same(settings, sessions, monkeypatch):
    from chronica.stores.db import forgetting

    monkeypatch.setattr(forgetting, "EXPIRE_BATCH", 2)
    monkeypatch.setattr(forgetting, "BATCH", 1)
    settings.CHRONICA = {"RETENTION": [*RULES, {"older_than": "10d", "action": "delete"}]}
    done = services.apply_retention()
    assert next(iter(done.values())) == {"acta": 4}
    assert list(done.values())[2] == {"chronica": 1, "acta": 7}
    assert models.Chronicum.objects.count() == 1


def test_no_rules_do_nothing(sessions):
    assert services.apply_retention() == {}


def test_a_session_written_to_meanwhile_is_kept(settings, sessions):
    """A chronicum whose last activity is old when the rule looks, but which a writer
    touches before its batch locks it, stays (the cutoff is checked on the locked row)."""
    settings.CHRONICA = {"RETENTION": [{"older_than": "365d", "action": "delete"}]}
    services.record_actum(OWNER, scenario.acta(f"{CHRONICUM}-last-year")[0])
    assert services.apply_retention() == {"delete older than 365d": {"chronica": 0, "acta": 0}}


@pytest.mark.slow
def test_beside_concurrent_writers(settings):
    settings.CHRONICA = {"RETENTION": RULES}
    for n in range(30):
        services.record_acta(OWNER, scenario.acta(f"old-{n}"))
        aged(f"old-{n}", 400 if n % 2 else 40)
    stop = threading.Event()
    errors: list[BaseException] = []
    wrote = [0]

    def writer(i: int) -> None:
        try:
            n = 0
            while not stop.is_set():
                n += 1
                services.record_actum(OWNER, scenario.acta(f"old-{(i + n) % 30}")[0])
                wrote[0] += 1
        except BaseException as exc:
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    try:
        done = services.apply_retention()
    finally:
        stop.set()
        for thread in threads:
            thread.join(30)
    assert errors == []
    assert wrote[0] > 0
    assert sum(c.get("acta", 0) for c in done.values()) > 0


@pytest.mark.parametrize(
    ("rules", "message"),
    [
        ({"older_than": "30d"}, "must be a list"),
        (["30d"], "must be a dict"),
        ([{"older_than": "30d", "action": "shred"}], "'redact' or 'delete'"),
        ([{"older_than": "thirty days", "action": "redact"}], "duration"),
        ([{"older_than": "0d", "action": "redact"}], "longer than nothing"),
        ([{"older_than": "30d", "action": "redact", "kinds": ["memo"]}], "unknown kind"),
        ([{"older_than": "30d", "action": "delete", "kinds": ["message"]}], "no 'kinds'"),
        ([{"older_than": "30d", "action": "redact", "when": "always"}], "unknown keys"),
    ],
)
def test_a_malformed_rule_is_a_check_error(settings, rules, message):
    with pytest.raises(ValueError, match=message):
        parse_rules(rules)
    settings.CHRONICA = {"RETENTION": rules}
    errors = [e for e in run_checks() if e.id == "chronica.E019"]
    assert len(errors) == 1
    assert message in errors[0].msg
    with pytest.raises(ImproperlyConfigured, match=message):
        services.apply_retention()
    with pytest.raises(CommandError, match=message):
        call_command("chronica_retention", stdout=StringIO())


def test_the_command(settings, sessions):
    settings.CHRONICA = {"RETENTION": RULES}
    out = StringIO()
    call_command("chronica_retention", "--dry-run", stdout=out)
    assert (
        "redact tool_request,tool_response older than 30d: would change acta: 4" in out.getvalue()
    )
    assert models.Actum.objects.filter(redacted_at__isnull=False).count() == 0
    out = StringIO()
    call_command("chronica_retention", stdout=out)
    assert "delete older than 365d: changed acta: 7, chronica: 1" in out.getvalue()
    # (the year-old session's two went with it)
    assert models.Actum.objects.filter(redacted_at__isnull=False).count() == 2
