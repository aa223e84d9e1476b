"""The example project: chronica used the way a Django project would use it.

The Celery app is imported here so that ``@app.task`` modules and ``celery -A
example_project`` find the same app.
"""

from .celery import app as celery_app

__all__ = ("celery_app",)
