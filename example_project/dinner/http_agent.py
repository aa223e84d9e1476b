"""The booking agent as a service of its own, writing into a person's session over HTTP.

    python -m example_project.dinner.http_agent --api http://127.0.0.1:8000/api/ \\
        --token "$TOKEN" --chronicum dinner-friday

    python -m example_project.dinner.http_agent --api http://127.0.0.1:8000/api/ \\
        --credential "$SECRET" --chronicum dinner-friday

The credential is the booking agent's own (``manage.py chronica_agent_credential
issue --owner <id> --actor booking``; ``make demo`` prints one): with it the service
writes only as booking. The token is the person's DRF token (``manage.py
drf_create_token ardian``; ``make demo`` prints the demo user's), with which it
could write as anyone. The service never names an owner: the API takes
it from the token's user, through ``chronica.services.owner_id_for``, so the agent
writes into that person's sessions and can reach no one else's. It needs neither
Django settings nor the database: only the URL and the token.
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import quote

from example_project.dinner.scenario import BOOKING_REPLY, BOOKING_REPLY_KEY


def call(
    method: str, url: str, token: str, body: Any = None, **headers: str
) -> tuple[int, dict[str, str], Any]:
    """One API call with the person's token, or the agent's own credential (a
    ``chr_agent_`` secret, sent as Bearer): ``(status, headers, JSON body)``."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    scheme = "Bearer" if token.startswith("chr_agent_") else "Token"
    request.add_header("Authorization", f"{scheme} {token}")
    request.add_header("Accept", "application/json")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    for name, value in headers.items():
        request.add_header(name.replace("_", "-"), value)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), json.load(response)
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), json.loads(exc.read() or b"null")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--api", required=True, help="where chronica.api.urls is included")
    who = parser.add_mutually_exclusive_group(required=True)
    who.add_argument(
        "--credential",
        dest="token",
        help="the booking agent's own credential (manage.py chronica_agent_credential issue)",
    )
    who.add_argument("--token", help="the person's API token (the agent may write as anyone)")
    parser.add_argument("--chronicum", default="dinner-friday")
    parser.add_argument("--content", default=BOOKING_REPLY)
    parser.add_argument("--key", default=BOOKING_REPLY_KEY, help="the reply's Idempotency-Key")
    args = parser.parse_args(argv)
    acta_url = f"{args.api.rstrip('/')}/chronica/{quote(args.chronicum, safe='')}/acta/"

    # Booking's window: the last three messages.
    status, _, window = call("GET", f"{acta_url}?kind=message&last_n=3", args.token)
    if status != 200:
        print(f"reading the window: {status} {window}", file=sys.stderr)
        return 1
    for actum in window:
        print(f"read   {actum['actor']:<10} {actum['content']}")

    reply = {"kind": "message", "actor_kind": "agent", "actor": "booking"}
    status, headers, stored = call(
        "POST", acta_url, args.token, {**reply, "content": args.content}, Idempotency_Key=args.key
    )
    if status not in (200, 201):
        print(f"recording the reply: {status} {stored}", file=sys.stderr)
        return 1
    replayed = " (a replay: the first reply)" if headers.get("Idempotent-Replayed") else ""
    print(f"stored {stored['id']}{replayed}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
