"""Search's query language, one meaning on every store (``search_acta``).

A query is words, every one of which must match; ``"quoted phrases"``, whose words
must follow one another; ``or`` between two parts, either of which may match (``and``
binds tighter: ``kemang villa or ubud`` is ``(kemang and villa) or ubud``); and
``-word`` or ``-"a phrase"``, which must not match. Letters are matched without
regard to case and with their accents (``café`` is not ``cafe``). Nothing else is
syntax: parentheses, ``*``, ``NEAR``, ``AND``, ``NOT`` and ``column:`` are words or
separators like any other punctuation.

``parse_query`` turns the text into a ``SearchQuery``; each database gets it in its
own language from here, never the text as typed: ``websearch()`` for PostgreSQL's
``websearch_to_tsquery``, ``fts5()`` for SQLite's FTS5 ``MATCH`` (every term a quoted
string, so no FTS5 syntax comes through), ``matches()`` for a store in Python.
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata

__all__ = ["HIGHLIGHT", "SEARCHED_CHARACTERS", "SearchQuery", "Term", "parse_query", "words_of"]

HIGHLIGHT = ("«", "»")
"""What marks each matching word in a hit's snippet, before and after it."""

MAX_QUERY_LENGTH = 1000
"""The longest query, in characters."""

SEARCHED_CHARACTERS = 50_000
"""Search reads the first this many characters of an actum's content, and the first this
many of the strings inside its data, on every store.

PostgreSQL's ``tsvector`` holds at most 1,048,575 bytes of lexemes and positions; past
that the write fails. Each distinct lexeme costs its UTF-8 (at most 4 bytes a
character), up to a pad byte, and 4 bytes for its position; a character is in at most
two lexemes (a hyphenated word and its part, a URL and its host or path). The densest
text found, hyphenated pairs of three-letter words in letters of four bytes, makes 7.75
bytes a character; two lexemes of such letters approach 8: 2 x 50,000 characters make
at most 800,000 bytes, whatever ``MAX_ACTUM_BYTES`` allows, with room to spare. It also
bounds what a write spends indexing: a 2.4 MB actum was recorded in 0.4 s, now 0.12 s,
as with no index."""

_WORD = re.compile(r"[^\W_]+")
# A term: an optional "-", then a quoted phrase (its closing quote optional, as a
# query cut short) or a run of anything but spaces and quotes.
_TERM = re.compile(r'(-?)(?:"([^"]*)"?|([^\s"]+))')


def words_of(text: str) -> list[str]:
    """The words of ``text`` as a store in Python compares them: runs of letters and
    digits, lowercase, composed (NFC)."""
    return _WORD.findall(unicodedata.normalize("NFC", text).lower())


@dataclasses.dataclass(frozen=True, slots=True)
class Term:
    """A word or a phrase of a query, as typed (``text``, no quote in it), and whether
    it must not match (``negated``)."""

    text: str
    negated: bool = False

    @property
    def words(self) -> tuple[str, ...]:
        return tuple(words_of(self.text))


@dataclasses.dataclass(frozen=True, slots=True)
class SearchQuery:
    """A parsed query: ``groups``, any of which may match (``or``); within a group
    every term not negated must match and no negated one may."""

    groups: tuple[tuple[Term, ...], ...]

    def websearch(self) -> str:
        """The query for PostgreSQL's ``websearch_to_tsquery``: every term quoted (a
        phrase, or one word), so that PostgreSQL's parser splits it as it splits the
        text it indexed."""
        return " or ".join(
            " ".join(("-" if t.negated else "") + f'"{t.text}"' for t in group)
            for group in self.groups
        )

    def fts5(self) -> str:
        """The query for SQLite's FTS5 ``MATCH``: each term an FTS5 string (in which
        nothing is syntax), AND within a group, NOT for each negated term, OR between
        groups, every operator's operands in parentheses."""

        def string(term: Term) -> str:
            return '"' + term.text.replace('"', '""') + '"'

        parts = []
        for group in self.groups:
            expression = "(" + " AND ".join(string(t) for t in group if not t.negated) + ")"
            for term in group:
                if term.negated:
                    expression = f"({expression} NOT {string(term)})"
            parts.append(expression)
        return " OR ".join(parts)

    def matches(self, words: list[str]) -> bool:
        """Whether a text of these ``words`` (``words_of``) matches."""
        return any(
            all(_contains(words, t.words) != t.negated for t in group) for group in self.groups
        )

    def count(self, words: list[str]) -> int:
        """How often the query's wanted words occur in ``words``: a plain rank."""
        wanted = {w for group in self.groups for t in group if not t.negated for w in t.words}
        return sum(1 for w in words if w in wanted)


def _contains(words: list[str], phrase: tuple[str, ...]) -> bool:
    n = len(phrase)
    return any(tuple(words[i : i + n]) == phrase for i in range(len(words) - n + 1))


def parse_query(text: str) -> SearchQuery:
    """``text`` as a ``SearchQuery``; ``ValueError`` where it has nothing to find: empty,
    longer than ``MAX_QUERY_LENGTH``, no word in it, or a part of it only ``-word``."""
    if not isinstance(text, str):
        raise ValueError(f"a search query is a string, not {type(text).__name__}")
    if len(text) > MAX_QUERY_LENGTH:
        raise ValueError(f"a search query holds at most {MAX_QUERY_LENGTH} characters")
    if "\x00" in text:
        raise ValueError("a search query holds no NUL character")
    groups: list[tuple[Term, ...]] = []
    group: list[Term] = []
    for match in _TERM.finditer(text):
        minus, phrase, word = match.groups()
        if phrase is None and not minus and word.lower() == "or":
            if group:
                groups.append(tuple(group))
            group = []
            continue
        term = Term(" ".join((word if phrase is None else phrase).split()), bool(minus))
        if term.words:  # a term of punctuation alone finds nothing: dropped
            group.append(term)
    if group:
        groups.append(tuple(group))
    if not groups:
        raise ValueError("the search query has no word to find")
    for found in groups:
        if all(t.negated for t in found):
            raise ValueError(
                "each part of a search query needs a word to find: -word only leaves words out"
            )
    return SearchQuery(tuple(groups))


def text_of(content: str, data: object) -> str:
    """What search reads of an actum: the first ``SEARCHED_CHARACTERS`` of its ``content``
    and of the strings inside its ``data`` (values, not keys, in document order, one
    space apart), as SQLite's index holds them."""
    strings: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, str):
            strings.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list | tuple):
            for item in value:
                walk(item)

    walk(data)
    found = " ".join(s for s in strings if s)
    return " ".join(s for s in (content[:SEARCHED_CHARACTERS], found[:SEARCHED_CHARACTERS]) if s)


def snippet(text: str, query: SearchQuery, *, words: int = 16) -> str:
    """About ``words`` words of ``text`` around its first match of ``query``, each
    wanted word between ``HIGHLIGHT``'s marks (a store in Python; the databases make
    their own)."""
    wanted = {w for group in query.groups for t in group if not t.negated for w in t.words}
    spans = [(m.start(), m.end(), m.group().lower() in wanted) for m in _WORD.finditer(text)]
    first = next((i for i, span in enumerate(spans) if span[2]), 0)
    chosen = spans[max(first - words // 4, 0) : max(first - words // 4, 0) + words]
    if not chosen:
        return ""
    start, end = chosen[0][0], chosen[-1][1]
    out, at = [], start
    for s, e, hit in chosen:
        out.append(text[at:s])
        out.append(f"{HIGHLIGHT[0]}{text[s:e]}{HIGHLIGHT[1]}" if hit else text[s:e])
        at = e
    prefix = "…" if start > 0 else ""
    suffix = "…" if end < len(text) else ""
    return prefix + "".join(out) + suffix
