"""The dinner app's pages: everything goes through ``chronica.services``."""

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import NoReverseMatch, reverse
from django.views.decorators.http import require_POST

from chronica import Actum, ChronicumNotFound, services

from .agents import AGENTS
from .scenario import BOOKING_REPLY, CHRONICUM
from .tasks import record_agent_reply


def index(request: HttpRequest) -> HttpResponse:
    """Links to the admin, the API and the agents' windows of a session (``?chronicum=``).

    An ID that no URL can carry (empty, or with a slash) answers 400 and says so;
    the ID is shown escaped, never as markup.
    """
    chronicum_id = request.GET.get("chronicum", CHRONICUM)
    try:
        links = {
            "follow": reverse("follow", args=[chronicum_id]),
            "windows": reverse("agent-windows", args=[chronicum_id]),
            "chronicum": reverse("chronica:chronicum-detail", args=[chronicum_id]),
            "acta": reverse("chronica:chronicum-acta", args=[chronicum_id]),
        }
    except NoReverseMatch:
        context = {"chronicum_id": chronicum_id, "links": None}
        return render(request, "dinner/index.html", context, status=400)
    return render(request, "dinner/index.html", {"chronicum_id": chronicum_id, "links": links})


def _actum(actum: Actum) -> dict[str, Any]:
    return {
        "id": actum.id,
        "kind": actum.kind,
        "actor_kind": actum.actor_kind,
        "actor": actum.actor,
        "content": actum.content,
        "at": actum.at.isoformat() if actum.at else None,
    }


@login_required
def agent_windows(request: HttpRequest, chronicum_id: str) -> JsonResponse:
    """Each agent's context window of one of the signed-in person's sessions.

    A session of someone else answers 404, exactly like one that does not exist.
    """
    owner_id = services.owner_id_for(request.user)
    try:
        chronicum = services.get_chronicum(owner_id, chronicum_id)
        windows = [
            {
                "agent": agent.name,
                "needs": agent.needs,
                "options": agent.describe(),
                "acta": [_actum(a) for a in agent.window(owner_id, chronicum_id)],
            }
            for agent in AGENTS
        ]
    except ChronicumNotFound:
        raise Http404(f"No session {chronicum_id!r}") from None
    return JsonResponse(
        {
            "chronicum": {
                "id": chronicum.id,
                "owner_id": chronicum.owner_id,
                "started_at": chronicum.started_at.isoformat(),
                "last_activity_at": chronicum.last_activity_at.isoformat(),
            },
            "windows": windows,
        },
        json_dumps_params={"indent": 2, "ensure_ascii": False},
    )


@login_required
@require_POST
def hold_the_table(request: HttpRequest, chronicum_id: str) -> JsonResponse:
    """Hand the booking agent's reply to a Celery worker; 202 with the task's ID.

    The worker has no request and no user, so the owner travels with the task as
    a string, computed here, where the person is signed in, by the same mapping
    the API uses.
    """
    owner_id = services.owner_id_for(request.user)
    try:
        services.get_chronicum(owner_id, chronicum_id)
    except ChronicumNotFound:
        raise Http404(f"No session {chronicum_id!r}") from None
    task = record_agent_reply.delay(owner_id, chronicum_id, "booking", BOOKING_REPLY)
    return JsonResponse({"task_id": task.id}, status=202)
