"""Settings of the processes that run chronica against a test cluster
(tests/clusters.py): tests/settings.py with DATABASES and READ_DATABASES from the
environment."""

import json
import os

from .settings import *  # noqa: F403

DATABASES = json.loads(os.environ["CHRONICA_CLUSTER_DATABASES"])
DATABASE_ROUTERS = ["chronica.routers.ReplicaRouter"]
CHRONICA = {"READ_DATABASES": json.loads(os.environ.get("CHRONICA_CLUSTER_READ", "[]"))}
