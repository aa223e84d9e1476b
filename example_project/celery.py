"""The example's Celery app: ``celery -A example_project worker``.

Broker and result backend come from ``CELERY_BROKER_URL`` and
``CELERY_RESULT_BACKEND`` in the settings (default ``redis://127.0.0.1:6379/0``).
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "example_project.settings")

app = Celery("example_project")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
