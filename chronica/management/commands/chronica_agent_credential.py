"""``manage.py chronica_agent_credential``: an owner's agent credentials.

- ``issue --owner OWNER --actor booking [--kind agent] [--kind system]
  [--chronicum ID]... [--expires-in 7d] [--may-list] [--may-delete] [--may-pop]``:
  issue one; the secret is printed once, alone on the last line (``| tail -1``).
- ``revoke KEY_ID [--owner OWNER]``: revoke one.
- ``list [--owner OWNER]``: the credentials, without secrets.

Every rule is ``chronica.services``' (``issue_credential`` and the rest).
"""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from chronica import services
from chronica.errors import ChronicaError


class Command(BaseCommand):
    help = "Issue, revoke or list the agent credentials of an owner."

    def add_arguments(self, parser: ArgumentParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        issue = actions.add_parser("issue", help="issue a credential; prints its secret last")
        issue.add_argument("--owner", required=True, help="the owner ID it acts for")
        issue.add_argument("--actor", required=True, help="the agent it writes as")
        issue.add_argument(
            "--kind",
            action="append",
            dest="kinds",
            choices=["agent", "system"],
            help="an actor kind it may write (repeatable; default agent)",
        )
        issue.add_argument(
            "--chronicum",
            action="append",
            dest="chronica",
            metavar="ID",
            help="a chronicum it may use (repeatable; default: all the owner's)",
        )
        issue.add_argument("--expires-in", help="a duration: 90s, 15m, 12h, 7d, 2w")
        for what in ("list", "delete", "pop"):
            issue.add_argument(f"--may-{what}", action="store_true", help=f"it may {what}")
        revoke = actions.add_parser("revoke", help="revoke a credential")
        revoke.add_argument("key_id", metavar="KEY_ID")
        revoke.add_argument("--owner", help="only if it is this owner's")
        listing = actions.add_parser("list", help="list credentials (never their secrets)")
        listing.add_argument("--owner", help="only this owner's")

    def handle(self, *args: Any, **options: Any) -> None:
        action = options["action"]
        try:
            if action == "issue":
                self._issue(options)
            elif action == "revoke":
                if not services.revoke_credential(options["key_id"], owner_id=options["owner"]):
                    raise CommandError(f"no active credential {options['key_id']!r}")
                self.stdout.write(f"revoked {options['key_id']}")
            else:
                self._list(options["owner"])
        except (ChronicaError, ValueError) as exc:
            raise CommandError(str(exc)) from exc

    def _issue(self, options: dict[str, Any]) -> None:
        issued = services.issue_credential(
            options["owner"],
            options["actor"],
            actor_kinds=options["kinds"] or ["agent"],
            chronica=options["chronica"],
            expires_in=options["expires_in"],
            may_list=options["may_list"],
            may_delete=options["may_delete"],
            may_pop=options["may_pop"],
        )
        info = issued.info
        self.stderr.write(
            f"issued {info.key_id} to {info.actor} ({', '.join(info.actor_kinds)}) for owner"
            f" {info.owner_id}; chronica: {', '.join(info.chronica or ['all'])}; expires:"
            f" {info.expires_at.isoformat() if info.expires_at else 'never'}."
            " The secret below is shown once and stored only as a hash:"
        )
        self.stdout.write(issued.secret)

    def _list(self, owner: str | None) -> None:
        for info in services.list_credentials(owner):
            state = "active" if info.active else ("revoked" if info.revoked_at else "expired")
            used = info.last_used_at.isoformat() if info.last_used_at else "never"
            self.stdout.write(
                f"{info.key_id}  {info.owner_id}  {info.actor}  {','.join(info.actor_kinds)}"
                f"  chronica={','.join(info.chronica or ['all'])}  {state}  last used {used}"
            )
