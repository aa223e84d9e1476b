"""The cases of ``supports_forget``: a redaction, an erasure, a retention rule."""

from __future__ import annotations

import contextlib
import datetime as dt
import threading
from typing import Any

from ..errors import ChronicumNotFound
from ..values import ActaQuery, ActumKind, Chronicum, StateChange, StateScope
from .base import _Base, _expect


class ForgetConformance(_Base):
    """The cases every store with ``supports_forget`` must pass."""

    ability = "forget"

    def _at(self) -> dt.datetime:
        return dt.datetime.now(dt.UTC).replace(microsecond=123456)

    def test_a_redaction_empties_content_and_data_and_keeps_the_rest(self) -> None:
        store = self.make_store()
        cid = self.new_chronicum(store, "ardian").id
        call = self.actum(
            cid,
            "book for 4 at 8pm, card 4111 1111 1111 1111",
            kind=ActumKind.TOOL_REQUEST,
            call_id="booking-reply-1",
            data={"card": "4111 1111 1111 1111"},
        )
        after = self.actum(cid, "thanks")
        store.append("ardian", cid, [call, after], tokens=[40, 5])
        at = self._at()
        redacted = store.redact("ardian", cid, call.id, reason="a card number", at=at)
        _expect(redacted is not None, "the owner's actum is redacted")
        assert redacted is not None
        _expect(redacted.content == "" and redacted.data is None, f"emptied: {redacted!r}")
        _expect(redacted.redacted is not None and redacted.redacted.at == at, "when")
        _expect(
            redacted.redacted is not None and redacted.redacted.reason == "a card number", "why"
        )
        read = store.acta(cid, ActaQuery())
        _expect([a.id for a in read] == [call.id, after.id], "the order stays")
        kept = read[0]
        _expect(
            (kept.kind, kept.actor_kind, kept.actor, kept.call_id, kept.at)
            == (call.kind, call.actor_kind, call.actor, call.call_id, read[0].at)
            and kept.content == ""
            and kept.data is None
            and kept.redacted == redacted.redacted,
            f"the window shows it redacted: {kept!r}",
        )
        _expect(read[1].content == "thanks" and read[1].redacted is None, "the other stays")
        page = store.window("ardian", cid, ActaQuery(max_tokens=5))
        assert page is not None
        _expect(
            [a.id for a in page[0]] == [call.id, after.id],
            "its token count is zero: a budget of 5 holds both",
        )

    def test_a_second_redaction_changes_nothing(self) -> None:
        store = self.make_store()
        cid = self.new_chronicum(store, "ardian").id
        actum = store.append("ardian", cid, [self.actum(cid, "secret")]).acta[0]
        first = store.redact("ardian", cid, actum.id, reason="first", at=self._at())
        later = self._at() + dt.timedelta(seconds=5)
        again = store.redact("ardian", cid, actum.id, reason="second", at=later)
        _expect(again is not None and first is not None, "both answer the actum")
        assert again is not None
        assert first is not None
        _expect(again.redacted == first.redacted, f"the first redaction stays: {again!r}")

    def test_only_the_owner_redacts_and_only_an_actum_of_the_chronicum(self) -> None:
        store = self.make_store()
        cid = self.new_chronicum(store, "ardian").id
        actum = store.append("ardian", cid, [self.actum(cid, "mine")]).acta[0]
        other = self.new_chronicum(store, "rafa").id
        _expect(
            store.redact("rafa", cid, actum.id, reason="", at=self._at()) is None,
            "another owner's chronicum: nothing",
        )
        _expect(
            store.redact("ardian", other, actum.id, reason="", at=self._at()) is None,
            "an actum of another chronicum: nothing",
        )
        _expect(
            store.redact("ardian", cid, "no-such-actum", reason="", at=self._at()) is None,
            "no such actum: nothing",
        )
        _expect(store.acta(cid, ActaQuery())[0].content == "mine", "nothing changed")

    def test_a_fork_keeps_a_redacted_actum_redacted(self) -> None:
        store = self.make_store()
        if not getattr(store, "supports_fork", False):
            return  # nothing to fork with: the fork's own suite is not this store's
        cid = self.new_chronicum(store, "ardian").id
        secret, _ = store.append(
            "ardian", cid, [self.actum(cid, "card 4111"), self.actum(cid, "thanks")]
        ).acta
        redacted = store.redact("ardian", cid, secret.id, reason="a card number", at=self._at())
        assert redacted is not None
        now = dt.datetime.now(dt.UTC)
        fork = store.fork("ardian", cid, None, Chronicum(self.new_id("fork"), "ardian", now, now))
        assert fork is not None
        copies = store.acta(fork.id, ActaQuery())
        _expect(
            [(a.content, a.redacted) for a in copies]
            == [("", redacted.redacted), ("thanks", None)],
            f"the copy of a redacted actum is redacted too: {copies!r}",
        )

    def test_redactions_since_a_moment_up_to_a_position(self) -> None:
        store = self.make_store()
        cid = self.new_chronicum(store, "ardian").id
        acta = store.append("ardian", cid, self.labelled(cid, 3)).acta
        _, position, _ = store.acta_after("ardian", cid, ActaQuery(), None, 0)
        since = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=1)
        store.redact("ardian", cid, acta[1].id, reason="", at=dt.datetime.now(dt.UTC))
        found = store.redactions("ardian", cid, since, position)
        _expect([a.id for a in found] == [acta[1].id], f"the redacted one: {found!r}")
        later = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=5)
        _expect(store.redactions("ardian", cid, later, position) == [], "none since later")
        _expect(store.redactions("rafa", cid, since, position) == [], "not another owner's")

    def test_an_erasure_removes_the_owners_chronica_acta_and_state(self) -> None:
        store = self.make_store()
        owner, other = self.new_id("leaving"), self.new_id("staying")
        mine = [self.new_chronicum(store, owner).id for _ in range(3)]
        for cid in mine:
            store.append(owner, cid, self.labelled(cid, 4))
        store.append(
            owner,
            mine[0],
            [],
            state=[StateChange(namespace="app", scope=StateScope.OWNER, set={"likes": "tea"})],
        )
        theirs = self.new_chronicum(store, other).id
        store.append(other, theirs, self.labelled(theirs, 2))
        seen: list[bool] = []

        def before_commit(dry_run: bool) -> dict[str, int]:
            seen.append(dry_run)
            return {"integration_rows": 2}

        planned = store.erase(owner, reason="asked", dry_run=True, before_commit=before_commit)
        _expect(planned.counts.get("acta") == 12, f"a dry run counts: {planned.counts!r}")
        _expect(store.acta(mine[0], ActaQuery()) != [], "a dry run removes nothing")
        erasure = store.erase(owner, reason="asked", before_commit=before_commit)
        _expect(seen == [True, False], f"before_commit ran for each: {seen!r}")
        counts = dict(erasure.counts)
        _expect(
            counts.get("chronica") == 3 and counts.get("acta") == 12,
            f"the rows removed: {counts!r}",
        )
        _expect(counts.get("integration_rows") == 2, "before_commit's rows are counted")
        _expect(owner not in repr(erasure) and len(erasure.owner_hash) == 64, "no owner ID")
        for cid in mine:
            try:
                store.get(cid)
            except ChronicumNotFound:
                continue
            raise AssertionError(f"{cid} is still there")
        _expect(store.list_chronica(owner, 100, None) == [], "nothing listed")
        view = store.read_state(owner, "app", None, None)
        _expect(view.owner_state == {}, f"the owner's state is gone: {view!r}")
        _expect(len(store.acta(theirs, ActaQuery())) == 2, "another owner's stay")

    def test_writers_racing_an_erasure_land_before_it_or_are_refused(self) -> None:
        store = self.make_store()
        owner = self.new_id("leaving")
        chronica = [self.new_chronicum(store, owner).id for _ in range(6)]
        for cid in chronica:
            store.append(owner, cid, self.labelled(cid, 3))
        # Set in the erasure's last transaction: a write that returned before it was
        # set has committed before that transaction, and must be gone.
        last_step = threading.Event()
        finished = threading.Event()
        landed_before: list[str] = []
        erasures: list[Any] = []

        def before_commit(dry_run: bool) -> dict[str, int]:
            last_step.set()
            return {}

        def write(i: int) -> None:
            if i == 0:
                try:
                    erasures.append(store.erase(owner, reason="race", before_commit=before_commit))
                finally:
                    finished.set()
                return
            n = 0
            while not finished.is_set() and n < 2000:
                n += 1
                cid = chronica[(i + n) % len(chronica)]
                actum = self.actum(cid, f"w{i}-{n}")
                recorded = store.append(owner, cid, [actum], create="missing")
                if recorded is not None and not last_step.is_set():
                    landed_before.append(actum.id)

        self.run_threads(4, write)
        _expect(len(erasures) == 1, "the erasure returned")
        left: set[str] = set()
        for cid in chronica:
            with contextlib.suppress(ChronicumNotFound):
                left |= {a.id for a in store.acta(cid, ActaQuery())}
        _expect(
            not set(landed_before) & left,
            "every write that landed before the erasure's last step is gone",
        )

    def test_retention_redacts_old_acta_of_its_kinds_and_deletes_old_chronica(self) -> None:
        store = self.make_store()
        owner = self.new_id("owner")
        cid = self.new_chronicum(store, owner).id
        old = store.append(
            owner,
            cid,
            [
                self.actum(cid, "tool output", kind=ActumKind.TOOL_RESPONSE, call_id="c1"),
                self.actum(cid, "a message"),
            ],
        ).acta
        cutoff = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=1)
        planned = store.expire(
            "redact", cutoff, frozenset({"tool_response"}), reason="r", dry_run=True
        )
        _expect(planned.get("acta", 0) >= 1, f"a dry run counts: {planned!r}")
        _expect(store.acta(cid, ActaQuery())[0].content == "tool output", "and changes nothing")
        done = store.expire("redact", cutoff, frozenset({"tool_response"}), reason="r")
        _expect(done.get("acta", 0) >= 1, f"redacted: {done!r}")
        read = store.acta(cid, ActaQuery())
        _expect(read[0].id == old[0].id and read[0].content == "", "the tool output is empty")
        _expect(read[0].redacted is not None and read[0].redacted.reason == "r", "and says why")
        _expect(read[1].content == "a message", "another kind stays")
        kept = self.new_chronicum(store, owner).id
        store.append(owner, kept, [self.actum(kept, "recent")])
        early = dt.datetime.now(dt.UTC) - dt.timedelta(days=1)
        store.expire("delete", early, frozenset(), reason="r")
        _expect(len(store.acta(kept, ActaQuery())) == 1, "a recent chronicum stays")
        done = store.expire("delete", cutoff + dt.timedelta(seconds=5), frozenset(), reason="r")
        _expect(done.get("chronica", 0) >= 2, f"old chronica deleted: {done!r}")
        for gone in (cid, kept):
            try:
                store.get(gone)
            except ChronicumNotFound:
                continue
            raise AssertionError(f"{gone} is still there")
