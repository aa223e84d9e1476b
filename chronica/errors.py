"""The errors chronica names. Match them with ``except``; every other error passes through."""

from __future__ import annotations

__all__ = [
    "ChronicaError",
    "ChronicumExists",
    "ChronicumNotFound",
    "EmptyOwnerID",
    "IdempotencyUnsupported",
    "InvalidActum",
    "InvalidCredential",
    "InvalidQuery",
    "NotPermitted",
    "StateConflict",
    "StoreUnsupported",
]


class ChronicaError(Exception):
    """Root of every error chronica raises itself. Never raised on its own."""


class ChronicumNotFound(ChronicaError, LookupError):
    """The chronicum does not exist, or it belongs to another owner (the two look the same)."""


class ChronicumExists(ChronicaError):
    """``Store.create`` was given an ID that is already taken."""


class InvalidActum(ChronicaError, ValueError):
    """``record_actum`` refused the actum; the message says what is wrong. Nothing was written."""


class InvalidQuery(ChronicaError, ValueError):
    """A read or a listing was given an argument chronica cannot take (an unknown kind
    in a filter, a negative ``max_tokens``, a ``before`` that is not an actum of the
    chronicum, a ``limit`` out of range); the message says which."""


class EmptyOwnerID(ChronicaError, ValueError):
    """A call named no owner."""


class OwnerIDNotAString(InvalidActum, InvalidQuery, TypeError):
    """The owner ID is not a ``str`` (an ``int`` user pk, a user object): a ``TypeError``
    that says so, raised before anything is read or written. It is also the
    ``InvalidActum`` (a write) and the ``InvalidQuery`` (a read) the rules name for a
    field of the wrong type, so code that catches those still catches it."""


class IdempotencyUnsupported(ChronicaError):
    """An idempotency key was given to a store that is not an ``IdempotentStore``."""


class StoreUnsupported(ChronicaError, NotImplementedError):
    """The store lacks the capability a call needs (a batch, a listing, a delete, a
    pop); the message names it. Raised before anything is written."""


class StateConflict(ChronicaError):
    """A write's ``StateChange.expect`` did not hold (someone changed the state since it
    was read), or a chronicum's state was named under another namespace. Nothing of
    the write was stored."""


class NotPermitted(ChronicaError, PermissionError):
    """A call made with an agent's credential broke one of its rules: it wrote as
    another actor or with an actor kind the credential lacks, or it listed, deleted or
    popped without the credential allowing it. ``rule`` names the rule (``"actor"``,
    ``"actor_kind"``, ``"list"``, ``"delete"``, ``"pop"``); the message says what was
    refused. Nothing was written."""

    def __init__(self, message: str, *, rule: str) -> None:
        super().__init__(message)
        self.rule = rule


class InvalidCredential(ChronicaError, PermissionError):
    """A secret that is no credential's, or a credential expired or revoked (also when
    it is revoked while a write made with it is under way: the write lands before the
    revocation, or not at all). ``reason`` says which (``"unknown"``, ``"expired"``,
    ``"revoked"``), for the server's logs; tell a client only that it was refused."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"invalid agent credential ({reason})")
        self.reason = reason
