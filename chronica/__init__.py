"""chronica: the shared episodic memory of AI-agent sessions, for Django.

The value types, the errors and the store interfaces import without Django
settings; ``chronica.services`` holds the rules.
"""

from .errors import (
    ChronicaError,
    ChronicumExists,
    ChronicumNotFound,
    EmptyOwnerID,
    IdempotencyUnsupported,
    InvalidActum,
    InvalidQuery,
    NotPermitted,
    StoreUnsupported,
)
from .interfaces import IdempotentStore, Store
from .values import (
    ActaPage,
    ActaQuery,
    ActorKind,
    Actum,
    ActumKind,
    ChronicaPage,
    Chronicum,
    Recorded,
)

__version__ = "0.2.0"

__all__ = [
    "ActaPage",
    "ActaQuery",
    "ActorKind",
    "Actum",
    "ActumKind",
    "ChronicaError",
    "ChronicaPage",
    "Chronicum",
    "ChronicumExists",
    "ChronicumNotFound",
    "EmptyOwnerID",
    "IdempotencyUnsupported",
    "IdempotentStore",
    "InvalidActum",
    "InvalidQuery",
    "NotPermitted",
    "Recorded",
    "Store",
    "StoreUnsupported",
]
