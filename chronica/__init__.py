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
    InvalidCredential,
    InvalidQuery,
    NotPermitted,
    StateConflict,
    StoreUnsupported,
)
from .interfaces import BaseStore, IdempotentStore, Store
from .values import (
    ActaPage,
    ActaQuery,
    ActorKind,
    Actum,
    ActumKind,
    ChronicaPage,
    Chronicum,
    Erasure,
    NamespaceListing,
    Recorded,
    RecordedActa,
    Redaction,
    SearchHit,
    StateChange,
    StateScope,
    StateView,
)

__version__ = "0.2.0"

__all__ = [
    "ActaPage",
    "ActaQuery",
    "ActorKind",
    "Actum",
    "ActumKind",
    "BaseStore",
    "ChronicaError",
    "ChronicaPage",
    "Chronicum",
    "ChronicumExists",
    "ChronicumNotFound",
    "EmptyOwnerID",
    "Erasure",
    "IdempotencyUnsupported",
    "IdempotentStore",
    "InvalidActum",
    "InvalidCredential",
    "InvalidQuery",
    "NamespaceListing",
    "NotPermitted",
    "Recorded",
    "RecordedActa",
    "Redaction",
    "SearchHit",
    "StateChange",
    "StateConflict",
    "StateScope",
    "StateView",
    "Store",
    "StoreUnsupported",
]
