"""Django's PostgreSQL backend, flushing as ``tests.backends`` says."""

from django.db.backends.postgresql import base, operations

from .. import KeepingFlush


class DatabaseOperations(KeepingFlush, operations.DatabaseOperations):
    pass


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations
