"""``<prefix>/chronica/<id>/state/``: the state a chronicum keeps beside its acta, and its
owner's (``chronica.services.get_state`` and ``update_state``)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response

from . import schema
from .agents import chronicarius_for
from .errors import BadRequest
from .inputs import owner_id, read_body
from .serializers import StateSerializer, StateWriteSerializer

__all__ = ["StateMixin"]


class StateMixin:
    """The state actions for ``ChronicumViewSet`` (``chronicum-state``)."""

    @extend_schema(**schema.GET_STATE)
    @action(
        detail=True,
        methods=["get"],
        url_path="state",
        url_name="state",
        query_parameters={"state": frozenset({"namespace"})},
    )
    def state(self, request: Request, chronicum_id: str) -> Response:
        """The chronicum's state in a namespace, and its owner's there."""
        namespace = request.query_params.get("namespace")
        if not namespace:
            # As a write refuses a change that names none.
            raise BadRequest("namespace is required: ?namespace=<the state's namespace>")
        owner = owner_id(request)
        view = chronicarius_for(request, owner).get_state(owner, namespace, chronicum_id)
        if view.chronicum is None:
            raise NotFound()  # missing, or someone else's: the same answer
        state = {
            "namespace": namespace,
            "chronicum_state": view.chronicum_state,
            "owner_state": view.owner_state,
        }
        return Response(StateSerializer(state).data)

    @extend_schema(**schema.CHANGE_STATE)
    @state.mapping.post
    def change_state(self, request: Request, chronicum_id: str) -> Response:
        """Change the chronicum's state and its owner's, in one transaction."""
        body = read_body(StateWriteSerializer(data=request.data))
        owner = owner_id(request)
        chronicarius_for(request, owner).update_state(
            owner, chronicum_id, body["changes"], create=body["create"]
        )
        return Response(status=status.HTTP_204_NO_CONTENT)
