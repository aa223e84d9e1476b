"""Property tests: a plain model of chronica against both stores, on random sessions.

The model of the context window is the rule written out: keep the acta whose kind
and actor kind pass the filters (an empty filter passes all), then the last N
(N <= 0: all), oldest first. The model of a well-formed actum is the validation rules
written out. Both must agree with InMemoryStore and DjangoStore on every database.
"""

from __future__ import annotations

import unicodedata
import uuid

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from chronica import ActorKind, Actum, ActumKind, ChronicumNotFound, EmptyOwnerID, InvalidActum
from chronica.services import Chronicarius
from chronica.stores.db import DjangoStore
from chronica.stores.memory import InMemoryStore

from ..scenario import OWNER

ACTORS = {ActorKind.HUMAN: ["ardian"], ActorKind.AGENT: ["concierge", "search", "booking"]}
ACTORS[ActorKind.SYSTEM] = ["scheduler"]

# Each example writes its own chronicum: the database outlives the examples.
DB_SETTINGS = settings(
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
MEMORY_SETTINGS = settings(max_examples=200, deadline=None)


def window(acta, kinds, actor_kinds, last_n):
    """The context window rule, written out."""
    kept = [
        a
        for a in acta
        if (not kinds or a.kind in kinds) and (not actor_kinds or a.actor_kind in actor_kinds)
    ]
    return kept[-last_n:] if last_n > 0 else kept


@st.composite
def sessions(draw):
    """A session of random acta, each with content that names it."""
    steps = draw(
        st.lists(st.tuples(st.sampled_from(ActumKind), st.sampled_from(ActorKind)), max_size=25)
    )
    return [
        (kind, actor_kind, draw(st.sampled_from(ACTORS[actor_kind])), f"#{i} {kind.value}")
        for i, (kind, actor_kind) in enumerate(steps)
    ]


def as_filter(members, spelling):
    """A filter as an app would pass it: enum members, strings, one string, or nothing."""
    if not members:
        return None if spelling == "none" else []
    values = sorted(m.value for m in members)
    if spelling == "enum":
        return [type(next(iter(members)))(v) for v in values]
    if spelling == "one" and len(values) == 1:
        return values[0]
    return values


queries = st.tuples(
    st.frozensets(st.sampled_from(ActumKind)),
    st.frozensets(st.sampled_from(ActorKind)),
    st.integers(min_value=-3, max_value=30),
    st.sampled_from(["enum", "str", "one", "none"]),
)


def check_windows(chronicarius, session, many_queries):
    chronicum_id = f"dinner-{uuid.uuid4().hex}"
    written = [
        chronicarius.record_actum(
            OWNER,
            Actum(
                chronicum_id=chronicum_id,
                kind=kind,
                actor_kind=actor_kind,
                actor=actor,
                content=content,
            ),
        )
        for kind, actor_kind, actor, content in session
    ]
    if not written:
        with pytest.raises(ChronicumNotFound):
            chronicarius.get_acta(OWNER, chronicum_id)
        return
    assert chronicarius.get_acta(OWNER, chronicum_id) == written
    for kinds, actor_kinds, last_n, spelling in many_queries:
        got = chronicarius.get_acta(
            OWNER,
            chronicum_id,
            kinds=as_filter(kinds, spelling),
            actor_kinds=as_filter(actor_kinds, spelling),
            last_n=last_n,
        )
        assert got == window(written, kinds, actor_kinds, last_n)


many_queries = st.lists(queries, min_size=1, max_size=6)


@MEMORY_SETTINGS
@given(session=sessions(), many_queries=many_queries)
def test_the_window_model_agrees_with_in_memory_store(session, many_queries):
    check_windows(Chronicarius(InMemoryStore()), session, many_queries)


@pytest.mark.django_db(transaction=True)
@DB_SETTINGS
@given(session=sessions(), many_queries=many_queries)
def test_the_window_model_agrees_with_django_store(session, many_queries):
    check_windows(Chronicarius(DjangoStore()), session, many_queries)


# -- random actum fields -------------------------------------------------------

TRICKY = ["\x00", "\ud800", "\udfff", "🍽", "𝄞", "\U0010ffff", "'", '"', "%s", "%", ";", "\\", "é"]
# Look-alikes a chronicum ID may not hold (an actor or content may): a no-break space,
# a filler, a variation selector, a combining accent (not NFC after an "e"), a tag.
TRICKY += ["\u00a0", "\u3164", "\ufe0f", "e\u0301", "\U000e0041"]
tricky_text = st.lists(st.sampled_from([*TRICKY, "a", "b", " "]), max_size=30).map("".join)
texts = st.one_of(
    st.text(max_size=30),
    tricky_text,
    tricky_text,
    # Around the 255-character limit, with the fresh chronicum prefix too.
    st.integers(min_value=200, max_value=260).map(lambda n: "é" * n),
)
not_texts = st.one_of(
    st.none(),
    st.integers(),
    st.floats(allow_nan=False),
    st.booleans(),
    st.binary(max_size=4),
    st.lists(st.text(max_size=2), max_size=2),
)
anything = st.one_of(texts, texts, not_texts)
kind_values = st.one_of(st.sampled_from(ActumKind), st.sampled_from([k.value for k in ActumKind]))
actor_kind_values = st.one_of(
    st.sampled_from(ActorKind), st.sampled_from([k.value for k in ActorKind])
)


def is_text(value, limit=255):
    """A string a database can keep exactly: valid UTF-8, no NUL, not too long."""
    if not isinstance(value, str) or "\x00" in value:
        return False
    if limit is not None and len(value) > limit:
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# Characters that show as nothing or as a plain space, so that an ID holding one reads
# like another: bidi controls, zero-width spaces and joiners, BOM, soft hyphen and tags
# (all category Cf); Unicode's other default-ignorable code points (variation
# selectors, CGJ, Hangul fillers); the braille blank; no-break spaces; line and
# paragraph separators.
SHOWN_AS_NOTHING = {0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x2065, 0x3164, 0xFFA0, 0x2800}
SHOWN_AS_SPACE = {0x00A0, 0x2007, 0x202F, 0x2028, 0x2029}
SHOWN_AS_NOTHING_RANGES = [
    (0x180B, 0x180F),
    (0xFE00, 0xFE0F),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
]


def unseen(char):
    code = ord(char)
    return (
        unicodedata.category(char) == "Cf"
        or code in SHOWN_AS_NOTHING | SHOWN_AS_SPACE
        or any(low <= code <= high for low, high in SHOWN_AS_NOTHING_RANGES)
    )


def is_identifier(value):
    """Text with no control character: C0, DEL or C1 (tab and newline included)."""
    return is_text(value) and not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in value)


def addressable(chronicum_id):
    """An identifier in NFC with nothing unseen, no outer space, and not "." or ".."."""
    return (
        is_identifier(chronicum_id)
        and chronicum_id not in ("", ".", "..")
        and chronicum_id == chronicum_id.strip()
        and not any(unseen(c) for c in chronicum_id)
        and unicodedata.is_normalized("NFC", chronicum_id)
    )


def well_formed(owner, chronicum_id, kind, actor_kind, actor, content, key):
    """The validation rules written out: what any store can keep the same way."""
    kinds = {k.value for k in ActumKind}
    return (
        is_identifier(owner)
        and owner != ""
        and addressable(chronicum_id)
        and isinstance(kind, str)
        and kind in kinds
        and isinstance(actor_kind, str)
        and actor_kind in {k.value for k in ActorKind}
        and is_identifier(actor)
        and actor != ""
        and is_text(content, limit=None)
        and (content != "" or kind in ("tool_request", "tool_response"))
        and (key is None or key == "" or is_identifier(key))
    )


good_text = st.one_of(
    st.text(alphabet=st.characters(exclude_characters="\x00"), min_size=1, max_size=30),
    st.lists(st.sampled_from(TRICKY[3:]), min_size=1, max_size=30).map("".join),
)
GOOD = {
    "owner": st.one_of(st.just(OWNER), good_text),
    "chronicum_suffix": good_text,
    "kind": kind_values,
    "actor_kind": actor_kind_values,
    "actor": st.one_of(st.just("booking"), good_text),
    "content": st.one_of(good_text, st.just("")),
    "key": st.one_of(st.none(), st.just(""), good_text),
}


@st.composite
def fields(draw):
    """A plausible actum with up to three fields replaced by anything at all."""
    chosen = {name: draw(strategy) for name, strategy in GOOD.items()}
    for name in draw(st.lists(st.sampled_from(sorted(GOOD)), max_size=3, unique=True)):
        chosen[name] = draw(anything)
    return chosen


def check_fields(chronicarius, store, f):
    suffix = f["chronicum_suffix"]
    # A string suffix goes after a fresh prefix, so no two examples share a chronicum;
    # an empty one stands for an empty chronicum ID.
    chronicum_id = suffix
    if isinstance(suffix, str) and suffix:
        chronicum_id = f"fresh-{uuid.uuid4().hex}-{suffix}"
    owner, key = f["owner"], f["key"]
    actum = Actum(
        chronicum_id=chronicum_id,
        kind=f["kind"],
        actor_kind=f["actor_kind"],
        actor=f["actor"],
        content=f["content"],
    )
    expected = well_formed(
        owner, chronicum_id, f["kind"], f["actor_kind"], f["actor"], f["content"], key
    )
    refused: Exception | None = None
    try:
        stored = chronicarius.record_actum(owner, actum, idempotency_key=key)
    except (InvalidActum, EmptyOwnerID) as exc:
        refused = exc
    if refused is not None:
        event("refused")
        assert not expected, f"a well-formed actum was refused: {refused}"
        assert isinstance(refused, InvalidActum) or owner in (None, "")
        if is_text(chronicum_id):
            with pytest.raises(ChronicumNotFound):
                store.get(chronicum_id)  # nothing partial: not even the chronicum
        return
    event("recorded")
    assert expected, "an actum that is not well-formed was recorded"
    assert (stored.chronicum_id, stored.actor, stored.content) == (
        chronicum_id,
        f["actor"],
        f["content"],
    )
    assert (stored.kind, stored.actor_kind) == (ActumKind(f["kind"]), ActorKind(f["actor_kind"]))
    assert chronicarius.get_acta(owner, chronicum_id) == [stored]
    assert chronicarius.get_chronicum(owner, chronicum_id).owner_id == owner


@MEMORY_SETTINGS
@given(f=fields())
def test_random_fields_record_or_are_refused_in_memory(f):
    store = InMemoryStore()
    check_fields(Chronicarius(store), store, f)


@pytest.mark.django_db(transaction=True)
@DB_SETTINGS
@given(f=fields())
def test_random_fields_record_or_are_refused_never_a_database_error(f):
    store = DjangoStore()
    check_fields(Chronicarius(store), store, f)
