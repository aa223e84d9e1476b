"""``manage.py chronica_agent_credential``: an owner's agent credentials.

- ``issue (--owner-user USERNAME | --owner OWNER) --actor booking [--kind agent]
  [--kind system] [--chronicum ID]... [--expires-in 7d] [--may-list] [--may-delete]
  [--may-pop]``: issue one; the secret is printed once, alone on the last line
  (``| tail -1``). ``--owner-user`` names the owner by their user name (their owner ID
  through ``CHRONICA["OWNER_ID"]``); an ``--owner`` ID that no user has is issued with a
  warning, naming the user whose user name it is, if any.
- ``revoke KEY_ID [--owner OWNER]``: revoke one.
- ``list [--owner OWNER]``: the credentials, without secrets.

Every rule is ``chronica.services``' (``issue_credential`` and the rest).
"""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from chronica import services
from chronica.errors import ChronicaError
from chronica.owners import owner_label, users_of


class Command(BaseCommand):
    help = "Issue, revoke or list the agent credentials of an owner."

    def add_arguments(self, parser: ArgumentParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        issue = actions.add_parser("issue", help="issue a credential; prints its secret last")
        owner = issue.add_mutually_exclusive_group(required=True)
        owner.add_argument(
            "--owner-user", metavar="USERNAME", help="the user it acts for (their user name)"
        )
        owner.add_argument("--owner", help="the owner ID it acts for")
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
        if options["owner_user"] is not None:
            owner_id = self._owner_of(options["owner_user"])
        else:
            owner_id = options["owner"]
            self._warn_if_nobody(owner_id)
        issued = services.issue_credential(
            owner_id,
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

    def _owner_of(self, username: str) -> str:
        user_model = get_user_model()
        try:
            user = user_model._default_manager.get_by_natural_key(username)
        except user_model.DoesNotExist:
            raise CommandError(f"no user {username!r}: nothing issued") from None
        return services.owner_id_for(user)

    def _warn_if_nobody(self, owner_id: str) -> None:
        """A warning when no user has ``owner_id``: its writes would land in sessions
        no person can see (a user name typed as the owner, say)."""
        if users_of(owner_id):
            return
        hint = ""
        user_model = get_user_model()
        named = user_model._default_manager.filter(**{user_model.USERNAME_FIELD: owner_id})
        if (user := named.first()) is not None:
            hint = f"; the user {owner_label(user)} is --owner-user {user.get_username()}"
        self.stderr.write(
            f"warning: no user has the owner ID {owner_id!r} (CHRONICA['OWNER_ID']){hint}."
            " Issuing it all the same: an owner need not be a user."
        )

    def _list(self, owner: str | None) -> None:
        for info in services.list_credentials(owner):
            state = "active" if info.active else ("revoked" if info.revoked_at else "expired")
            used = info.last_used_at.isoformat() if info.last_used_at else "never"
            self.stdout.write(
                f"{info.key_id}  {info.owner_id}  {info.actor}  {','.join(info.actor_kinds)}"
                f"  chronica={','.join(info.chronica or ['all'])}  {state}  last used {used}"
            )
