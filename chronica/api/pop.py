"""``POST <prefix>/chronica/<id>/acta/pop/``: remove and return the newest actum."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from . import schema
from .agents import chronicarius_for
from .inputs import owner_id
from .wire import actum_wire

__all__ = ["PopMixin"]


class PopMixin:
    """The pop action for ``ChronicumViewSet`` (``chronicum-acta-pop``)."""

    @extend_schema(**schema.POP_ACTUM)
    @action(detail=True, methods=["post"], url_path="acta/pop", url_name="acta-pop")
    def pop(self, request: Request, chronicum_id: str) -> Response:
        """Remove and return the newest actum; 204 when there is none."""
        owner = owner_id(request)
        popped = chronicarius_for(request, owner).pop_actum(owner, chronicum_id)
        if popped is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(actum_wire(popped))
