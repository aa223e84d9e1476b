"""ASGI entry point: ``uvicorn example_project.asgi:application``."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "example_project.settings")

from chronica.api.asgi import BodyGuard, RequestQueue

# At most DJANGO_CONCURRENCY requests in Django at once (a thread and a database
# connection each); a burst waits its turn instead of failing.
queued = RequestQueue(
    get_asgi_application(), concurrency=int(os.environ.get("DJANGO_CONCURRENCY", "16"))
)
# A body too large, chunked, or without valid credentials is refused before it is
# read; one that has not arrived DJANGO_BODY_TIMEOUT seconds after its headers is a
# 408 (uvicorn itself waits for a body as long as its client trickles it).
application = BodyGuard(
    queued, paths=("/api/",), body_timeout=float(os.environ.get("DJANGO_BODY_TIMEOUT", "30"))
)
