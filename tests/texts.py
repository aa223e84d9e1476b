"""Long texts for search's index: distinct words up to an actum's size limit, and the
densest text for PostgreSQL's ``tsvector`` (the most bytes of it per character of
text) the tests could build."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable, Iterator

LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _words() -> Iterator[str]:
    for length in (3, 4, 5):
        for letters in itertools.product(LETTERS, repeat=length):
            yield "".join(letters)


def _joined(words: Iterable[str], n_chars: int, sep: str = " ") -> str:
    out, size = [], 0
    for word in words:
        if size + len(word) + len(sep) > n_chars:
            break
        out.append(word)
        size += len(word) + len(sep)
    return sep.join(out)


@functools.cache
def distinct_words(n_chars: int) -> str:
    """Distinct words of three to five ASCII letters, one space apart, at most
    ``n_chars`` characters (and bytes) of them. None is six letters long: a test's own
    words (``kemang``) are never among them."""
    return _joined(_words(), n_chars)


def _pairs(first: int) -> Iterator[str]:
    alphabet = [chr(first + i) for i in range(256)]
    parts = ("".join(letters) for letters in itertools.product(alphabet, repeat=3))
    for x, y in zip(parts, parts, strict=False):
        yield f"{x}-{y}"


@functools.cache
def densest(n_chars: int, first: int = 0x20000) -> str:
    """Hyphenated pairs of distinct three-letter words, in letters of four bytes of UTF-8
    (CJK Extension B from ``first``), one space apart: PostgreSQL's parser keeps the
    whole pair and each part, so every letter is in two lexemes (about 7.75 bytes of
    ``tsvector`` a character; short words, single letters, CJK of three bytes, URLs and
    e-mail addresses all make less). Two ``first`` 256 letters apart or more share no
    lexeme."""
    return _joined(_pairs(first), n_chars)
