"""The identifiers of every call: owners, actors, call IDs, keys and chronicum IDs.

A chronicum ID is global and shown to people, so besides what every database can
keep it must read like no other ID: nothing in it that is not shown.
"""

from __future__ import annotations

import functools
import re
import unicodedata

from ..errors import EmptyOwnerID, InvalidActum, OwnerIDNotAString

MAX_LENGTH = 255
"""The longest chronicum ID, actor, call ID, owner and idempotency key chronica accepts."""

# A lone surrogate (JSON can carry one as "\ud800") is a Python str no database
# driver can encode: refuse it here instead of half-writing and failing in the driver.
SURROGATE = re.compile("[\ud800-\udfff]")
"""A lone surrogate: never valid Unicode text, in an ID or in JSON data."""
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
"""A control character (C0, DEL and C1, tab and newline included): never part of an
identifier a person could read or type (rule 2). The one pattern every check uses."""
# What makes two different chronicum IDs read the same (IDs are global, so one could
# pass for another's): format characters (category Cf: bidi controls, zero-width
# spaces and joiners, the byte order mark, the soft hyphen, tag characters) and the
# other code points Unicode says to show as nothing (Default_Ignorable_Code_Point,
# from DerivedCoreProperties.txt: variation selectors, the combining grapheme joiner,
# the Hangul fillers, reserved tags), the braille blank, the no-break spaces (they
# read as a plain space) and the line and paragraph separators.
_VARIATION_SELECTOR = re.compile("[\u180b-\u180d\u180f\ufe00-\ufe0f\U000e0100-\U000e01ef]")
_FILLER = re.compile("[\u115f\u1160\u3164\uffa0\u2800]")
_NO_BREAK_SPACE = re.compile("[\u00a0\u2007\u202f]")
_INVISIBLE = re.compile(
    "[\u034f\u17b4\u17b5\u2028\u2029\u2065\ufff0-\ufff8\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)
_KINDS_UNSEEN = (
    (_VARIATION_SELECTOR, "variation selector"),
    (_FILLER, "filler character"),
    (_NO_BREAK_SPACE, "no-break space"),
    (_INVISIBLE, "invisible character"),
)
_UNSEEN = re.compile("|".join(pattern.pattern for pattern, _ in _KINDS_UNSEEN))


def check_owner(owner_id: object) -> None:
    """Every call names an owner."""
    if owner_id is None or owner_id == "":
        raise EmptyOwnerID("owner_id is empty")
    if not isinstance(owner_id, str):
        raise OwnerIDNotAString(
            f"owner_id must be a string, not {type(owner_id).__name__}:"
            " pass services.owner_id_for(user) (or str(user.pk))"
        )


def storable(value: object) -> bool:
    """Whether ``value`` can be an ID any store keeps: a string, not too long, no NUL,
    no lone surrogate."""
    return (
        isinstance(value, str)
        and len(value) <= MAX_LENGTH
        and "\x00" not in value
        # (an ASCII string, most IDs, holds no surrogate: no search of it)
        and (value.isascii() or not SURROGATE.search(value))
    )


def check_text(name: str, value: object, *, limit: int | None = MAX_LENGTH) -> None:
    """A string any database keeps as it is: no NUL, no lone surrogate, at most
    ``limit`` characters (``None``: any length). Raises ``InvalidActum``."""
    if not isinstance(value, str):
        raise InvalidActum(f"{name} must be a string, not {type(value).__name__}")
    if "\x00" in value:
        raise InvalidActum(f"{name} contains a NUL character")
    if SURROGATE.search(value):
        raise InvalidActum(f"{name} contains a lone surrogate, which is not valid Unicode text")
    if limit is not None and len(value) > limit:
        raise InvalidActum(f"{name} is longer than {limit} characters")


def check_identifier(name: str, value: object) -> None:
    """An ID, an actor, an owner or a key: a string of at most 255 characters with no
    control character (tab and newline included) and nothing no database can keep."""
    check_text(name, value)
    assert isinstance(value, str)
    if found := CONTROL.search(value):
        raise InvalidActum(f"{name} contains the control character {found.group()!r}")


def check_chronicum_id(chronicum_id: object) -> str:
    """A chronicum ID a person can read, type and put in a URL, and that reads like
    no other ID.

    Besides the rules of every identifier: not empty, no space at either end, not
    ``.`` or ``..`` (which URLs resolve away); in Unicode NFC (``"café"`` typed as
    ``e`` and a combining accent is refused, with the NFC spelling in the message);
    no format character (category Cf: bidi controls, zero-width spaces and joiners,
    the byte order mark, tag characters), no variation selector, no filler (U+3164
    and the other Hangul fillers, the braille blank), no other character that shows
    as nothing (U+034F and the rest of Unicode's default-ignorable code points), no
    no-break space and no line or paragraph separator. Raises ``InvalidActum``.
    """
    check_identifier("chronicum_id", chronicum_id)
    assert isinstance(chronicum_id, str)
    if chronicum_id == "":
        raise InvalidActum("chronicum_id is empty")
    if chronicum_id in (".", ".."):
        raise InvalidActum(f"chronicum_id {chronicum_id!r} cannot be named in a URL")
    if chronicum_id != chronicum_id.strip():
        raise InvalidActum("chronicum_id starts or ends with white space")
    if chronicum_id.isascii():
        return chronicum_id  # none of the below is ASCII
    refusal = _unicode_refusal(chronicum_id)
    if refusal is not None:
        raise InvalidActum(refusal)
    return chronicum_id


@functools.lru_cache(maxsize=1024)
def _unicode_refusal(chronicum_id: str) -> str | None:
    """Why a chronicum ID that is not ASCII is refused, or ``None``. Cached: a batch
    names its chronicum once per actum."""
    char = _unseen(chronicum_id)
    if char is not None:
        if unicodedata.category(char) == "Cf":
            what = "format character"
        else:
            what = next(w for pattern, w in _KINDS_UNSEEN if pattern.match(char))
        return (
            f"chronicum_id contains the {what} U+{ord(char):04X}"
            f" ({unicodedata.name(char, 'unnamed')}): a chronicum ID holds no"
            " character that is not shown, so that no two IDs read the same"
        )
    if not unicodedata.is_normalized("NFC", chronicum_id):
        return (
            "chronicum_id is not in Unicode NFC (normalization form C): the same name in"
            f" NFC is {unicodedata.normalize('NFC', chronicum_id)!r}"
        )
    return None


def _unseen(text: str) -> str | None:
    """The first character of ``text`` a chronicum ID may not hold, if any."""
    found = _UNSEEN.search(text)
    end = found.start() if found else len(text)
    category = unicodedata.category
    for char in text[:end]:
        if category(char) == "Cf":
            return char
    return found.group() if found else None
