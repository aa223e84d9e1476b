"""Django's SQLite backend, flushing as ``tests.backends`` says."""

from django.db.backends.sqlite3 import base, operations

from .. import KeepingFlush


class DatabaseOperations(KeepingFlush, operations.DatabaseOperations):
    pass


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations
