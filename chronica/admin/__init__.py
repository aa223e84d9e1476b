"""Browse and inspect chronica in the Django admin, read-only.

A chronicum is an append-only record: nobody adds or changes a chronicum or an
actum here. A whole chronicum, with its acta, may be deleted by a user holding
its delete permission (an erasure request), through ``chronica.services``; a
single actum never is.

Every page stays bounded however large a session or an actum grows: acta are
read from the database cut to their first few KB (never whole), a transcript
shows the most recent ``TRANSCRIPT_LIMIT`` acta, and the whole of an actum is
streamed by a view of its own in chunks.

The admins are one module each: ``chronicum`` (the chronica, their transcripts and
their erasure), ``acta`` (every actum, and the whole of one), ``credentials`` (the
agents' credentials), ``erasures`` (the records of erased owners), on what they
share in ``base``; what a page shows of an actum
and the transcript are in ``display``, the list filters in ``filters``. Importing
this package registers them.
"""

from __future__ import annotations

from .acta import ActumAdmin
from .base import ReadOnlyAdmin
from .chronicum import ChronicumAdmin
from .credentials import AgentCredentialAdmin
from .display import TRANSCRIPT_LIMIT, shown
from .erasures import ErasureAdmin

__all__ = [
    "TRANSCRIPT_LIMIT",
    "ActumAdmin",
    "AgentCredentialAdmin",
    "ChronicumAdmin",
    "ErasureAdmin",
    "ReadOnlyAdmin",
    "shown",
]
