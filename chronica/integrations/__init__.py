"""Agent frameworks on chronica, one module or package per framework, each behind its
own extra.

A framework's module imports its framework and nothing imports the module by default:
``chronica`` stays usable without any framework installed. ``pydantic_ai`` is also a
Django app (its conversations' tables), which a project adds to ``INSTALLED_APPS``.
Each one calls ``chronica.services`` and its framework's public API only, so every rule
of chronica (the owner, write order, validation) holds for a framework's memory exactly
as for the API's.
"""
