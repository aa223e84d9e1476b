"""Signals chronica sends, from its one write path, after the writing transaction commits.

* ``actum_recorded`` (keyword arguments ``owner_id``, ``actum``): once for every
  newly stored actum, never for an idempotent replay, never after a rollback.
* ``chronicum_deleted`` (``owner_id``, ``chronicum_id``): once a chronicum and its
  acta are gone.

The sender is ``chronica.services.Chronicarius``. A receiver that raises does not
undo the write, and the caller is not told: the error is logged on the
``chronica`` logger and the other receivers still run.
"""

from django.dispatch import Signal

__all__ = ["actum_recorded", "chronicum_deleted"]

actum_recorded = Signal()
actum_recorded.name = "actum_recorded"  # type: ignore[attr-defined]
chronicum_deleted = Signal()
chronicum_deleted.name = "chronicum_deleted"  # type: ignore[attr-defined]
