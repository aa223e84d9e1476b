"""ASGI entry point: ``uvicorn example_project.asgi:application``."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "example_project.settings")

from chronica.api.asgi import BodyGuard

# A body too large, chunked, or without credentials is refused before it is read.
application = BodyGuard(get_asgi_application(), paths=("/api/",))
