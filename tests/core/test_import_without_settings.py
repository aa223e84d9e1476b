"""The core imports and works in a process with Django installed but no settings."""

import subprocess
import sys
import textwrap


def test_core_works_without_django_settings():
    code = textwrap.dedent(
        """
        import os
        os.environ.pop("DJANGO_SETTINGS_MODULE", None)
        import chronica
        from chronica import (
            Actum, Chronicum, ActaQuery, ActumKind, ActorKind, Store, IdempotentStore,
            ChronicaError, ChronicumNotFound, ChronicumExists, InvalidActum, EmptyOwnerID,
            IdempotencyUnsupported,
        )
        from chronica.services import Chronicarius
        from chronica.stores.memory import InMemoryStore
        from chronica import storeconformance
        from django.conf import settings

        c = Chronicarius(InMemoryStore())
        a = c.record_actum("ardian", Actum(chronicum_id="dinner-friday", kind="message",
                           actor_kind="human", actor="ardian", content="Hi."))
        assert c.get_acta("ardian", "dinner-friday") == [a]
        storeconformance.run_test(InMemoryStore)
        storeconformance.run_idempotent_test(InMemoryStore)
        assert not settings.configured
        print("ok")
        """
    )
    env = {"PATH": "/usr/bin:/bin"}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
