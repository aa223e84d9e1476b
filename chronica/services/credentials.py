"""Agent credentials: issued by an owner to one agent, shown once, stored as a hash.

A secret is ``chr_agent_<key ID>_<random>``: the prefix lets secret scanners and
log filters spot it, the key ID (public, 12 hex digits) names the credential in the
admin and in ``acta.recorded_by``, and the random part (256 bits) is the secret. The
table keeps only the SHA-256 of the whole secret (a slow hash buys nothing against
256 random bits); ``authenticate`` compares in constant time, and takes the same
path for an unknown key ID as for a wrong secret.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import hmac
import re
import secrets
from collections.abc import Iterable

from ..errors import InvalidActum, InvalidCredential
from ..validation.identifiers import check_chronicum_id, check_identifier, check_owner
from ..validation.parameters import parse_duration
from ..values import ActorKind
from .identity import AgentIdentity

__all__ = [
    "SECRET_PREFIX",
    "CredentialInfo",
    "InvalidCredential",
    "IssuedCredential",
    "authenticate_credential",
    "credential_active",
    "issue_credential",
    "list_credentials",
    "parse_duration",
    "revoke_credential",
]

SECRET_PREFIX = "chr_agent_"
_SECRET = re.compile(r"chr_agent_([0-9a-f]{12})_([A-Za-z0-9_-]{43})")
# What an unknown key ID is compared against: the same work as a wrong secret.
_DUMMY_HASH = "sha256$" + hashlib.sha256(b"chronica: no such credential").hexdigest()
_USED_EVERY = dt.timedelta(seconds=60)


@dataclasses.dataclass(frozen=True)
class CredentialInfo:
    """A credential as the owner sees it: everything but the secret."""

    key_id: str
    owner_id: str
    actor: str
    actor_kinds: tuple[str, ...]
    chronica: tuple[str, ...] | None
    may_list: bool
    may_delete: bool
    may_pop: bool
    created_at: dt.datetime
    expires_at: dt.datetime | None
    revoked_at: dt.datetime | None
    last_used_at: dt.datetime | None

    @property
    def active(self) -> bool:
        now = dt.datetime.now(dt.UTC)
        return self.revoked_at is None and (self.expires_at is None or self.expires_at > now)


@dataclasses.dataclass(frozen=True)
class IssuedCredential:
    """A credential just issued: ``secret`` is shown now and never again."""

    info: CredentialInfo
    secret: str = dataclasses.field(repr=False)


def hash_secret(secret: str) -> str:
    return "sha256$" + hashlib.sha256(secret.encode()).hexdigest()


def _kinds(actor_kinds: Iterable[str] | str) -> tuple[str, ...]:
    if isinstance(actor_kinds, str):
        actor_kinds = [actor_kinds]
    kinds = []
    for value in actor_kinds:
        try:
            kind = ActorKind(value)
        except ValueError:
            raise ValueError(f"{value!r} is not an actor kind (agent, system)") from None
        if kind is ActorKind.HUMAN:
            raise ValueError("an agent credential never writes as a human")
        kinds.append(kind.value)
    if not kinds:
        raise ValueError("an agent credential needs at least one actor kind")
    return tuple(sorted(set(kinds)))


def _info(row: object) -> CredentialInfo:
    fields = {f.name for f in dataclasses.fields(CredentialInfo)}
    values = {name: getattr(row, name) for name in fields}
    values["actor_kinds"] = tuple(values["actor_kinds"])
    if values["chronica"] is not None:
        values["chronica"] = tuple(values["chronica"])
    return CredentialInfo(**values)


def issue_credential(
    owner_id: str,
    actor: str,
    *,
    actor_kinds: Iterable[str] | str = ("agent",),
    chronica: Iterable[str] | None = None,
    expires_in: dt.timedelta | str | None = None,
    may_list: bool = False,
    may_delete: bool = False,
    may_pop: bool = False,
) -> IssuedCredential:
    """Issue ``owner_id``'s agent ``actor`` a credential: it writes only as ``actor``
    with ``actor_kinds`` (``agent``, ``system``; never ``human``), into ``owner_id``'s
    chronica (only ``chronica`` when given), until ``expires_in`` (a timedelta or
    ``"7d"``) if given. The secret is in the answer, and nowhere else, ever."""
    from ..stores import credentials as table

    check_owner(owner_id)
    check_identifier("owner_id", owner_id)
    check_identifier("actor", actor)
    if actor == "":
        raise InvalidActum("actor is empty: a credential is issued to one agent")
    kinds = _kinds(actor_kinds)
    named = None
    if chronica is not None:
        if isinstance(chronica, str):
            chronica = [chronica]
        named = sorted(set(chronica))
        for chronicum_id in named:
            check_chronicum_id(chronicum_id)
    if isinstance(expires_in, str):
        expires_in = parse_duration(expires_in)
    if expires_in is not None and expires_in <= dt.timedelta(0):
        raise ValueError("expires_in must be positive")
    now = dt.datetime.now(dt.UTC)
    key_id = secrets.token_hex(6)
    secret = f"{SECRET_PREFIX}{key_id}_{secrets.token_urlsafe(32)}"
    row = table.add(
        key_id=key_id,
        secret_hash=hash_secret(secret),
        owner_id=owner_id,
        actor=actor,
        actor_kinds=list(kinds),
        chronica=named,
        may_list=bool(may_list),
        may_delete=bool(may_delete),
        may_pop=bool(may_pop),
        created_at=now,
        expires_at=None if expires_in is None else now + expires_in,
    )
    return IssuedCredential(_info(row), secret)


def authenticate_credential(secret: str) -> AgentIdentity:
    """The identity a secret stands for; ``InvalidCredential`` if it is no
    credential's (a wrong secret and an unknown key ID take the same path), or the
    credential has expired or been revoked."""
    from ..stores import credentials as table

    match = _SECRET.fullmatch(secret) if isinstance(secret, str) else None
    row = table.find(match[1]) if match else None
    stored = row.secret_hash if row is not None else _DUMMY_HASH
    given = hash_secret(secret if isinstance(secret, str) else "")
    if not hmac.compare_digest(stored.encode(), given.encode()) or row is None:
        raise InvalidCredential("unknown")
    now = dt.datetime.now(dt.UTC)
    if row.revoked_at is not None:
        raise InvalidCredential("revoked")
    if row.expires_at is not None and row.expires_at <= now:
        raise InvalidCredential("expired")
    table.mark_used(row.key_id, now, every=_USED_EVERY)
    return identity_of(row)


def credential_active(key_id: str) -> bool:
    """Whether the credential ``key_id`` may still be used: known, not revoked, not
    expired. Work that outlives the request its credential authenticated (a stream) asks
    again as it goes on."""
    from ..stores import credentials as table

    row = table.find(key_id)
    now = dt.datetime.now(dt.UTC)
    return (
        row is not None
        and row.revoked_at is None
        and (row.expires_at is None or row.expires_at > now)
    )


def identity_of(row: object) -> AgentIdentity:
    info = row if isinstance(row, CredentialInfo) else _info(row)
    return AgentIdentity(
        owner_id=info.owner_id,
        actor=info.actor,
        key_id=info.key_id,
        actor_kinds=frozenset(ActorKind(k) for k in info.actor_kinds),
        chronica=None if info.chronica is None else frozenset(info.chronica),
        may_list=info.may_list,
        may_delete=info.may_delete,
        may_pop=info.may_pop,
    )


def revoke_credential(key_id: str, *, owner_id: str | None = None) -> bool:
    """Revoke the credential (only if it is ``owner_id``'s, when given); whether one
    that was not revoked yet was found."""
    from ..stores import credentials as table

    return table.revoke(key_id, dt.datetime.now(dt.UTC), owner_id)


def list_credentials(owner_id: str | None = None) -> list[CredentialInfo]:
    """``owner_id``'s credentials (everyone's with ``None``), newest first, without secrets."""
    from ..stores import credentials as table

    return [_info(row) for row in table.of_owner(owner_id)]
