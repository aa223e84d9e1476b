"""search_acta: an owner's acta across their sessions, on both stores (and, for the
DjangoStore, on both databases); the query language means the same everywhere."""

from __future__ import annotations

import asyncio

import pytest

from chronica import ActorKind, Actum, ActumKind, InvalidQuery, NotPermitted, SearchHit
from chronica.search import HIGHLIGHT, SEARCHED_CHARACTERS
from chronica.services import AgentIdentity, Chronicarius, OwnerIdentity
from chronica.validation import DEFAULT_MAX_ACTUM_BYTES

from .. import scenario
from ..teststores import PlainStore
from ..texts import distinct_words

M, H, A = ActumKind.MESSAGE, ActorKind.HUMAN, ActorKind.AGENT


def say(chronicum_id: str, content: str, *, actor: str = "ardian", data=None, kind=M) -> Actum:
    kind_of_actor = H if actor in ("ardian", "rafa") else A
    return Actum(
        chronicum_id=chronicum_id,
        kind=kind,
        actor_kind=kind_of_actor,
        actor=actor,
        content=content,
        data=data,
    )


@pytest.fixture
def sessions(chronicarius):
    """ardian's two sessions and rafa's one, all about dinners in Jakarta."""
    chronicarius.record_acta("ardian", scenario.acta())
    chronicarius.record_acta("ardian", [scenario.booking_reply()])
    chronicarius.record_acta(
        "ardian",
        [
            say("villa-ubud", "A villa in Ubud for the first week of August, with a pool."),
            say(
                "villa-ubud",
                "",
                actor="travel",
                kind=ActumKind.TOOL_RESPONSE,
                data={"villa": "Omah Padi", "confirmation": "OP-7734", "nights": 7},
            ),
        ],
    )
    chronicarius.record_acta(
        "rafa",
        [say("rafa-kemang", "Dinner in Kemang on Saturday, a quiet table.", actor="rafa")],
    )
    return chronicarius


def contents(hits: list[SearchHit]) -> list[str]:
    return [hit.actum.content for hit in hits]


class TestWhatIsFound:
    def test_every_word_must_match_and_only_the_owners_acta(self, sessions):
        hits = sessions.search_acta("ardian", "quiet table Kemang")
        assert contents(hits) == [scenario.SEVEN[0][3]]
        assert all(hit.actum.chronicum_id != "rafa-kemang" for hit in hits)
        (rafas,) = sessions.search_acta("rafa", "quiet table Kemang")
        assert rafas.actum.chronicum_id == "rafa-kemang"
        assert sessions.search_acta("nobody", "kemang") == []

    def test_a_hit_is_the_stored_actum_a_rank_and_a_snippet(self, sessions):
        (hit,) = sessions.search_acta("ardian", "confirmation RT-4821")
        stored = sessions.get_acta("ardian", scenario.CHRONICUM)[-1]
        assert hit.actum == stored
        assert isinstance(hit.rank, float)
        assert hit.rank > 0
        assert f"{HIGHLIGHT[0]}Confirmation{HIGHLIGHT[1]}" in hit.snippet

    def test_the_strings_inside_data_are_searched(self, sessions):
        (hit,) = sessions.search_acta("ardian", "Omah Padi")
        assert hit.actum.data["confirmation"] == "OP-7734"
        assert f"{HIGHLIGHT[0]}Omah{HIGHLIGHT[1]}" in hit.snippet
        (by_number,) = sessions.search_acta("ardian", "OP-7734")
        assert by_number.actum == hit.actum
        # keys are not text; numbers are not strings
        assert sessions.search_acta("ardian", "confirmation villa nights") == []

    def test_case_does_not_matter(self, sessions):
        assert contents(sessions.search_acta("ardian", "UBUD")) == contents(
            sessions.search_acta("ardian", "ubud")
        )

    def test_a_quoted_phrase_needs_its_words_in_order(self, sessions):
        assert len(sessions.search_acta("ardian", '"Rumah Teduh"')) == 5
        assert sessions.search_acta("ardian", '"Teduh Rumah"') == []

    def test_or_and_minus(self, sessions):
        either = sessions.search_acta("ardian", "pool or RT-4821")
        assert sorted(contents(either)) == sorted(
            [scenario.BOOKING_REPLY, "A villa in Ubud for the first week of August, with a pool."]
        )
        without = sessions.search_acta("ardian", '"Rumah Teduh" -confirmation -"under Ardian"')
        assert len(without) == 3
        assert all("Confirmation" not in c and "under" not in c for c in contents(without))

    def test_and_binds_tighter_than_or(self, sessions):
        hits = sessions.search_acta("ardian", "villa august or saturday")
        assert contents(hits) == ["A villa in Ubud for the first week of August, with a pool."]

    def test_the_best_match_first_and_the_limit(self, sessions):
        hits = sessions.search_acta("ardian", "Rumah Teduh", limit=10)
        ranks = [hit.rank for hit in hits]
        assert ranks == sorted(ranks, reverse=True)
        assert sessions.search_acta("ardian", "Rumah Teduh", limit=2) == hits[:2]
        assert sessions.search_acta("ardian", "Rumah Teduh", limit=2, offset=2) == hits[2:4]

    def test_filters_narrow_it(self, sessions):
        assert {
            h.actum.actor for h in sessions.search_acta("ardian", "teduh", actors="ardian")
        } == {"ardian"}
        assert {
            h.actum.actor_kind for h in sessions.search_acta("ardian", "teduh", actor_kinds="agent")
        } == {A}
        tool = sessions.search_acta("ardian", "padi", kinds=[ActumKind.TOOL_RESPONSE])
        assert len(tool) == 1
        assert sessions.search_acta("ardian", "padi", kinds="message") == []
        assert sessions.search_acta("ardian", "teduh", chronica=["villa-ubud"]) == []
        assert len(sessions.search_acta("ardian", "ubud", chronica="villa-ubud")) == 1
        # rafa's chronicum, named by ardian, finds nothing of rafa's
        assert sessions.search_acta("ardian", "kemang", chronica=["rafa-kemang"]) == []

    def test_a_namespace_narrows_it_to_the_chronica_whose_state_is_there(self, sessions):
        from chronica import StateChange

        sessions.update_state(
            "ardian", "villa-ubud", [StateChange(namespace="adk:trips", set={"trip": "ubud"})]
        )
        assert contents(sessions.search_acta("ardian", "ubud or teduh", namespace="adk:trips")) == [
            "A villa in Ubud for the first week of August, with a pool."
        ]
        assert sessions.search_acta("ardian", "teduh", namespace="adk:other") == []
        assert sessions.search_acta("rafa", "kemang", namespace="adk:trips") == []
        with pytest.raises(InvalidQuery):
            sessions.search_acta("ardian", "teduh", namespace=5)

    def test_asyncio_twin(self, sessions):
        hits = asyncio.run(sessions.asearch_acta("ardian", "ubud"))
        assert hits == sessions.search_acta("ardian", "ubud")


class TestLongActa:
    """An actum as long as ``MAX_ACTUM_BYTES`` allows, of distinct words (a page a tool
    fetched, hashes, base64), is recorded on every store and database and found by a
    word near its start: in its content, in a string of its data, among the many
    strings of its data."""

    FILL = DEFAULT_MAX_ACTUM_BYTES - 1000

    def tool_result(self, data) -> Actum:
        return say("long", "", actor="fetch", kind=ActumKind.TOOL_RESPONSE, data=data)

    def test_in_content(self, chronicarius):
        content = "Kemang villas, the page:\n" + distinct_words(self.FILL)
        chronicarius.record_acta("ardian", [say("long", content, actor="fetch")])
        assert contents(chronicarius.search_acta("ardian", "kemang villas")) == [content]

    def test_in_a_string_of_data(self, chronicarius):
        # escapes (\n, \", \\) before the words, in data's JSON
        page = 'Kemang villas, the page:\n"quoted"\\path\nubud ' + distinct_words(self.FILL)
        chronicarius.record_acta("ardian", [self.tool_result({"page": page, "status": 200})])
        (hit,) = chronicarius.search_acta("ardian", "kemang villas")
        assert hit.actum.data["page"] == page
        for words in ("ubud", '"quoted path"'):
            assert [h.actum for h in chronicarius.search_acta("ardian", words)] == [hit.actum]

    def test_among_the_many_strings_of_data(self, chronicarius):
        # 582,000 strings, 4.2 MB of JSON
        rows = ["Kemang villas", *distinct_words(3_000_000).split()]
        chronicarius.record_acta("ardian", [self.tool_result({"rows": rows})])
        (hit,) = chronicarius.search_acta("ardian", "kemang villas")
        assert hit.actum.data["rows"] == rows

    def test_the_first_characters_are_read_the_same_on_every_store(self, chronicarius):
        """SEARCHED_CHARACTERS of content, and of data's strings: a word shortly before
        the bound is found, one after it is not, wherever it is stored."""
        n = SEARCHED_CHARACTERS
        text = f"Kemang {distinct_words(n - 200)} Ubud {distinct_words(1000)} Seminyak"
        chronicarius.record_acta(
            "ardian",
            [say("long", text, actor="fetch"), self.tool_result({"page": text, "status": 200})],
        )
        for words in ("kemang", "ubud"):
            assert len(chronicarius.search_acta("ardian", words)) == 2
        assert chronicarius.search_acta("ardian", "seminyak") == []


class TestQueriesAreNeverSyntax:
    """What a person types is words: no FTS5 or tsquery operator comes through."""

    @pytest.mark.parametrize(
        "query",
        [
            'kemang"',
            '"kemang',
            '""kemang""',
            "kemang NEAR table",
            "NEAR(kemang table)",
            "content:kemang",
            "kemang*",
            "(kemang)",
            "kemang AND",
            "NOT kemang",
            "kemang ^table",
            "kemang & table | !x",
            "kemang:*",
            "kemang <-> table",
            "{kemang}",
            "kemang' OR 1=1 --",
            "kemang\\",
            "kemang;DROP TABLE acta",
            "kémang",
            "ケマン kemang",
            "kemang \U0001f600",
        ],
    )
    def test_hostile_queries_are_words(self, sessions, query):
        hits = sessions.search_acta("ardian", query)
        assert all(hit.actum.chronicum_id != "rafa-kemang" for hit in hits)

    def test_syntax_characters_are_separators(self, sessions):
        expected = contents(sessions.search_acta("ardian", "kemang quiet"))
        assert expected
        for query in ("kemang* quiet", "(kemang) quiet", "kemang: quiet", "^kemang quiet"):
            assert contents(sessions.search_acta("ardian", query)) == expected, query

    def test_operator_words_are_words_to_find(self, sessions):
        assert sessions.search_acta("ardian", "kemang NEAR") == []
        assert sessions.search_acta("ardian", "kemang AND") == []
        assert sessions.search_acta("ardian", '"or"') == []
        assert contents(sessions.search_acta("ardian", '"for" ubud')) == [
            "A villa in Ubud for the first week of August, with a pool."
        ]

    def test_accents_count(self, sessions):
        sessions.record_acta("ardian", [say("paris", "Un café près du Louvre.")])
        assert len(sessions.search_acta("ardian", "café")) == 1
        assert sessions.search_acta("ardian", "cafe") == []
        assert len(sessions.search_acta("ardian", "CAFÉ")) == 1


class TestBadQueries:
    @pytest.mark.parametrize(
        "query", ["", "   ", '""', "*", "()", "-kemang", "or", "kemang or -ubud"]
    )
    def test_nothing_to_find_is_value_error(self, chronicarius, query):
        with pytest.raises(ValueError):
            chronicarius.search_acta("ardian", query)

    def test_not_a_string(self, chronicarius):
        with pytest.raises(ValueError):
            chronicarius.search_acta("ardian", None)

    @pytest.mark.parametrize(
        "arguments",
        [
            {"limit": 0},
            {"limit": 1001},
            {"limit": "5"},
            {"offset": -1},
            {"offset": 1000},
            {"kinds": ["speech"]},
            {"actors": [""]},
            {"chronica": [5]},
        ],
    )
    def test_bad_arguments_are_invalid_query(self, chronicarius, arguments):
        with pytest.raises(InvalidQuery):
            chronicarius.search_acta("ardian", "kemang", **arguments)


class TestWhoSearches:
    def test_the_owner_in_person(self, sessions):
        owner = sessions.acting_as(OwnerIdentity("ardian"))
        assert len(owner.search_acta("ardian", "ubud")) == 1
        with pytest.raises(NotPermitted):
            owner.search_acta("rafa", "kemang")

    def test_an_agent_credential_limited_to_one_chronicum(self, sessions):
        concierge = AgentIdentity("ardian", "concierge", "k-concierge", chronica={"villa-ubud"})
        agent = sessions.acting_as(concierge)
        assert contents(agent.search_acta("ardian", "ubud or teduh")) == [
            "A villa in Ubud for the first week of August, with a pool."
        ]
        assert agent.search_acta("ardian", "teduh") == []
        assert agent.search_acta("ardian", "teduh", chronica=[scenario.CHRONICUM]) == []
        with pytest.raises(NotPermitted):
            agent.search_acta("rafa", "kemang")

    def test_an_agent_credential_for_all_the_owners_chronica(self, sessions):
        agent = sessions.acting_as(AgentIdentity("ardian", "concierge", "k-all"))
        assert len(agent.search_acta("ardian", "teduh ubud or teduh")) == 5
        assert all(
            h.actum.chronicum_id != "rafa-kemang" for h in agent.search_acta("ardian", "kemang")
        )


def test_owners_of_any_spelling_are_kept_apart(chronicarius):
    owners = ["o'ne", 'two "quoted"', "ü-owner", "ardian", "ARDIAN", "ardian "]
    for owner in owners:
        chronicarius.record_acta(owner, [say(f"c-{owners.index(owner)}", f"kemang by {owner}")])
    for owner in owners:
        (hit,) = chronicarius.search_acta(owner, "kemang")
        assert hit.actum.content == f"kemang by {owner}"


class TestForgetting:
    def test_a_popped_actum_or_a_deleted_chronicum_is_not_found(self, sessions):
        assert len(sessions.search_acta("ardian", "RT-4821")) == 1
        sessions.pop_actum("ardian", scenario.CHRONICUM)
        assert sessions.search_acta("ardian", "RT-4821") == []
        sessions.delete_chronicum("ardian", "villa-ubud")
        assert sessions.search_acta("ardian", "ubud or padi") == []

    def test_an_id_taken_again_by_another_owner(self, sessions):
        sessions.delete_chronicum("ardian", "villa-ubud")
        sessions.record_acta("rafa", [say("villa-ubud", "My own villa in Ubud.", actor="rafa")])
        assert sessions.search_acta("ardian", "ubud") == []
        assert len(sessions.search_acta("rafa", "ubud")) == 1


def test_a_store_without_search_says_so():
    from chronica import StoreUnsupported

    with pytest.raises(StoreUnsupported, match="supports_search"):
        Chronicarius(PlainStore()).search_acta("ardian", "kemang")


def test_the_query_is_checked_before_the_store_is_asked():
    with pytest.raises(ValueError):
        Chronicarius(PlainStore()).search_acta("ardian", "")


@pytest.mark.parametrize("config", ["english'; DROP TABLE acta; --", "", 5, "a b", "x" * 64])
def test_a_search_config_that_is_not_a_plain_name_is_refused(config):
    from django.core.exceptions import ImproperlyConfigured
    from django.test import override_settings

    from chronica.checks import check_settings
    from chronica.conf import chronica_settings

    with override_settings(CHRONICA={"SEARCH_CONFIG": config}):
        assert [e.id for e in check_settings()] == ["chronica.E022"]
        with pytest.raises(ImproperlyConfigured, match="SEARCH_CONFIG"):
            _ = chronica_settings.SEARCH_CONFIG
