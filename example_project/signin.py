"""Sign-in forms with a throttle: the admin's and the browsable API's.

A password form is what an attacker guesses against. Each POST counts against
the address it came from (DRF's ``get_ident``, which trusts ``X-Forwarded-For``
only as far as ``NUM_PROXIES`` says) and against the username it names; over
``DEFAULT_THROTTLE_RATES["signin"]`` the answer is 429 with ``Retry-After``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse
from rest_framework.throttling import SimpleRateThrottle

__all__ = ["SignInRateThrottle", "throttled_sign_in"]


class SignInRateThrottle(SimpleRateThrottle):
    """Sign-in attempts, per address or per username (``on``)."""

    scope = "signin"

    def __init__(self, on: str) -> None:
        super().__init__()
        self.on = on

    def get_cache_key(self, request: Any, view: Any) -> str | None:
        if self.on == "address":
            ident = self.get_ident(request)
        else:
            ident = "user:" + str(request.POST.get("username", ""))[:150]
        return self.cache_format % {"scope": self.scope, "ident": ident}


def throttled_sign_in(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """``view``, a sign-in form, with its POSTs throttled."""

    @functools.wraps(view)
    def sign_in(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.method == "POST":
            for on in ("address", "username"):
                throttle = SignInRateThrottle(on)
                if not throttle.allow_request(request, None):
                    response = HttpResponse(
                        "Too many sign-in attempts: try again later.\n",
                        status=429,
                        content_type="text/plain; charset=utf-8",
                    )
                    response["Retry-After"] = str(math.ceil(throttle.wait() or 60))
                    return response
        return view(request, *args, **kwargs)

    return sign_in
