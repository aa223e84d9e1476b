"""The stores that ship with chronica: ``memory`` (tests, development) and ``db`` (Django ORM)."""
