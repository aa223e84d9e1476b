"""Signals chronica sends, from its one write path, after the writing transaction commits.

* ``actum_recorded`` (keyword arguments ``owner_id``, ``actum``): once for every
  newly stored actum, never for an idempotent replay, never after a rollback.
* ``chronicum_deleted`` (``owner_id``, ``chronicum_id``): once a chronicum and its
  acta are gone.
* ``actum_redacted`` (``owner_id``, ``actum``, the actum as it is now): once an actum's
  content and data are gone, after the commit; never for a repeated redaction.
* ``owner_erased`` (``owner_id``, ``owner_hash``, ``dry_run``): sent by ``erase_owner``
  **before** its last transaction commits, in it, so that each integration erases the
  owner's rows of its own tables in that transaction; a receiver returns how many rows
  it removed by table (``{"table": rows}``; with ``dry_run``, would remove, removing
  nothing), merged into ``Erasure.counts``. A receiver that raises rolls that
  transaction back: the erasure stays under way, and the next ``erase_owner`` of the
  owner takes it up again.

The sender is ``chronica.services.Chronicarius``. A receiver that raises does not
undo the write, and the caller is not told: the error is logged on the
``chronica`` logger and the other receivers still run.
"""

import logging
from typing import Any

from django.dispatch import Signal

__all__ = ["actum_recorded", "actum_redacted", "chronicum_deleted", "owner_erased"]

logger = logging.getLogger("chronica")


class _RobustSignal(Signal):
    """A Signal whose ``send_robust`` logs a failing receiver on the ``chronica`` logger.

    Django's own logging reads the receiver's ``__qualname__``, which a callable
    object or a ``functools.partial`` lacks: the AttributeError would escape from
    ``send_robust``, skip the other receivers and reach the writer after its
    commit. tests/core/test_signals.py connects such a receiver.
    """

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name

    def _log_robust_failure(self, receiver: Any, err: Exception) -> None:
        logger.error("chronica: receiver %r of %s failed", receiver, self.name, exc_info=err)


actum_recorded = _RobustSignal("actum_recorded")
chronicum_deleted = _RobustSignal("chronicum_deleted")
actum_redacted = _RobustSignal("actum_redacted")
owner_erased = Signal()
