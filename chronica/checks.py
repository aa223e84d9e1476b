"""System checks for ``settings.CHRONICA`` (``manage.py check``)."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, Warning, register
from django.core.exceptions import ImproperlyConfigured

from .conf import DEFAULTS, RETIRED, _resolve, chronica_settings, is_postgresql


@register(Tags.compatibility)
def check_settings(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    errors: list[CheckMessage] = []
    if not settings.USE_TZ:
        errors.append(
            Warning(
                "chronica keeps aware UTC datetimes and expects USE_TZ = True.",
                hint="Set USE_TZ = True (Django's default since 5.0).",
                id="chronica.W001",
            )
        )
    value = getattr(settings, "CHRONICA", None)
    if value is None:
        return [*errors, *_check_pooled(_resolve("STORE", DEFAULTS["STORE"]), {})]
    if not isinstance(value, Mapping):
        return [*errors, Error("The CHRONICA setting must be a dict.", id="chronica.E001")]
    unknown = sorted(set(value) - set(DEFAULTS) - set(RETIRED))
    if unknown:
        errors.append(
            Error(
                f"CHRONICA has unknown keys: {', '.join(map(str, unknown))}.",
                hint=f"Known keys: {', '.join(DEFAULTS)}.",
                id="chronica.E002",
            )
        )
    for name in sorted(set(value) & set(RETIRED)):
        errors.append(
            Warning(
                f"CHRONICA[{name!r}] has no effect since {RETIRED[name]}; remove it.",
                id="chronica.W005",
            )
        )
    if "RETENTION" in value:
        from .validation.retention import parse_rules

        try:
            parse_rules(value["RETENTION"])
        except ValueError as exc:
            errors.append(Error(str(exc), id="chronica.E019"))
    store: Callable[..., Any] | None = None
    for name, check_id in (
        ("STORE", "chronica.E003"),
        ("OWNER_ID", "chronica.E005"),
        ("TOKEN_COUNTER", "chronica.E007"),
    ):
        try:
            resolved = _resolve(name, value.get(name, DEFAULTS[name]))
        except ImproperlyConfigured as exc:
            errors.append(Error(str(exc), id=check_id))
        else:
            if name == "STORE":
                store = resolved
    options = value.get("STORE_OPTIONS", {})
    if not isinstance(options, Mapping):
        errors.append(Error("CHRONICA['STORE_OPTIONS'] must be a dict.", id="chronica.E004"))
    elif store is not None:
        errors.extend(_check_store_options(store, options))
    for name, check_id in (
        ("MAX_ACTUM_BYTES", "chronica.E010"),
        ("API_MAX_ACTA", "chronica.E011"),
        ("API_MAX_RESPONSE_BYTES", "chronica.E012"),
        ("FOLLOW_POLL_INTERVAL", "chronica.E008"),
        ("AUTO_CREATE", "chronica.E015"),
        ("LISTEN_DATABASE", "chronica.E013"),
        ("AGENT_THROTTLE_RATE", "chronica.E017"),
        ("OTEL_RECORD_CONTENT", "chronica.E018"),
        ("SEARCH_CONFIG", "chronica.E022"),
    ):
        try:
            getattr(chronica_settings, name)
        except ImproperlyConfigured as exc:
            errors.append(Error(str(exc), id=check_id))
    if value.get("LISTEN_DATABASE") is None and store is not None:
        errors.extend(_check_pooled(store, options if isinstance(options, Mapping) else {}))
    errors.extend(_check_read_databases())
    return errors


def _check_read_databases() -> list[CheckMessage]:
    """E016: READ_DATABASES is not a list of aliases; E014: an alias that DATABASES
    lacks, or one that is not PostgreSQL (read-your-writes asks the replica how far
    it has replayed the primary's WAL); W006: replicas named, but no router of
    chronica's in DATABASE_ROUTERS to send reads to them."""
    try:
        aliases = chronica_settings.READ_DATABASES
    except ImproperlyConfigured as exc:
        return [Error(str(exc), id="chronica.E016")]
    errors: list[CheckMessage] = []
    for alias in aliases:
        database = settings.DATABASES.get(alias)
        if database is None:
            errors.append(
                Error(
                    f"CHRONICA['READ_DATABASES'] names {alias!r}, which is not in DATABASES.",
                    hint=f"DATABASES has {', '.join(map(repr, settings.DATABASES))}.",
                    id="chronica.E014",
                )
            )
        elif "postgresql" not in str(database.get("ENGINE", "")):
            errors.append(
                Error(
                    f"CHRONICA['READ_DATABASES'] names {alias!r}, whose ENGINE"
                    f" {database.get('ENGINE')!r} is not PostgreSQL: chronica reads only"
                    " from PostgreSQL streaming replicas.",
                    id="chronica.E014",
                )
            )
    if aliases and not errors and not _routed():
        errors.append(
            Warning(
                "CHRONICA['READ_DATABASES'] names replicas, but DATABASE_ROUTERS does not"
                " list chronica's router: every read stays on the primary.",
                hint='Add "chronica.routers.ReplicaRouter" to DATABASE_ROUTERS.',
                id="chronica.W006",
            )
        )
    return errors


def _routed() -> bool:
    """``chronica.routers.ReplicaRouter`` (or a subclass) is among Django's routers."""
    from django.db import router

    from .routers import ReplicaRouter

    return any(isinstance(each, ReplicaRouter) for each in router.routers)


@register(Tags.compatibility)
def check_database_timeouts(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """W002: a PostgreSQL database whose OPTIONS set neither a connect timeout nor a
    statement timeout. A server that accepts connections but never answers would hold
    every request (one thread each) forever."""
    warnings: list[CheckMessage] = []
    for alias, database in settings.DATABASES.items():
        if not is_postgresql(database):
            continue
        options = database.get("OPTIONS") or {}
        if not isinstance(options, Mapping):
            continue
        connect = options.get("connect_timeout") not in (None, "", 0, "0")
        statement = "statement_timeout" in str(options.get("options") or "")
        if not connect and not statement:
            warnings.append(
                Warning(
                    f"DATABASES[{alias!r}] (PostgreSQL) sets no connect timeout and no"
                    " statement timeout: a database that accepts connections but never"
                    " answers makes every request wait forever.",
                    hint=f"Set DATABASES[{alias!r}]['OPTIONS'] = {{'connect_timeout': 5,"
                    " 'options': '-c statement_timeout=30000'}} (seconds; milliseconds).",
                    id="chronica.W002",
                )
            )
    return warnings


#: OPTIONS that bound, on the client's side, how long a PostgreSQL connection waits
#: for a server or a network that went silent (libpq's, in DATABASES' OPTIONS).
KEEPALIVE_OPTIONS = {
    "keepalives": 1,
    "keepalives_idle": 5,
    "keepalives_interval": 2,
    "keepalives_count": 3,
    "tcp_user_timeout": 10000,
}


@register(Tags.compatibility)
def check_database_keepalives(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """W004: a PostgreSQL database whose OPTIONS set neither ``tcp_user_timeout`` nor
    TCP keepalives (``keepalives_idle``). A statement under way when the database or
    the network goes silent waits as long as the silence lasts: the server's
    ``statement_timeout`` cannot fire when the server is not heard, and the system's
    keepalives start after two hours."""
    warnings: list[CheckMessage] = []
    for alias, database in settings.DATABASES.items():
        if not is_postgresql(database):
            continue
        options = database.get("OPTIONS") or {}
        if not isinstance(options, Mapping):
            continue
        user_timeout = options.get("tcp_user_timeout") not in (None, "", 0, "0")
        keepalives = options.get("keepalives") not in (0, "0") and options.get(
            "keepalives_idle"
        ) not in (None, "", 0, "0")
        if not user_timeout and not keepalives:
            warnings.append(
                Warning(
                    f"DATABASES[{alias!r}] (PostgreSQL) sets no client-side bound on a silent"
                    " database: a statement under way when the server or the network goes"
                    " silent waits for the whole outage (statement_timeout is the server's and"
                    " cannot fire).",
                    hint=f"Add to DATABASES[{alias!r}]['OPTIONS']: {KEEPALIVE_OPTIONS!r}"
                    " (seconds; tcp_user_timeout in milliseconds).",
                    id="chronica.W004",
                )
            )
    return warnings


# What a connection through a transaction pooler looks like: PgBouncer's port, the
# port of Supabase's pooler, a host named for one, or Django's setting for one.
POOLER_PORTS = frozenset({"6432", "6543"})
POOLER_HOSTS = ("bouncer", "pooler", "pgcat", "odyssey", "supavisor")


def looks_pooled(settings_dict: Mapping[str, Any]) -> str | None:
    """Why the database of ``settings_dict`` looks reached through a pooler, or ``None``."""
    if not is_postgresql(settings_dict):
        return None
    port, host = str(settings_dict.get("PORT") or ""), str(settings_dict.get("HOST") or "")
    if port in POOLER_PORTS:
        return f"its PORT is {port}, a pooler's"
    if any(name in host.lower() for name in POOLER_HOSTS):
        return f"its HOST {host!r} names a pooler"
    if settings_dict.get("DISABLE_SERVER_SIDE_CURSORS"):
        return "it sets DISABLE_SERVER_SIDE_CURSORS, as Django asks behind a transaction pooler"
    return None


def _check_pooled(store: Callable[..., Any], options: Mapping[Any, Any]) -> list[CheckMessage]:
    """W003: live follow would LISTEN through what looks like a pooler."""
    from django.db import DEFAULT_DB_ALIAS, router

    from . import models
    from .stores.db import DjangoStore

    if not (isinstance(store, type) and issubclass(store, DjangoStore)):
        return []
    using = options.get("using")
    alias = (
        using
        if isinstance(using, str)
        else router.db_for_write(models.Chronicum) or DEFAULT_DB_ALIAS
    )
    why = looks_pooled(settings.DATABASES.get(alias, {}))
    if why is None:
        return []
    return [
        Warning(
            f"Live follow LISTENs on the database {alias!r}, which looks reached through a"
            f" connection pooler ({why}). In transaction mode a pooler drops LISTEN and the"
            " follow locks, and followers silently fall back to polling.",
            hint="Add an alias of DATABASES that reaches PostgreSQL directly and set"
            " CHRONICA['LISTEN_DATABASE'] to it (docs/live-follow.md).",
            id="chronica.W003",
        )
    ]


def _check_store_options(store: Callable[..., Any], options: Mapping[Any, Any]) -> list[Error]:
    """E006: the store's signature refuses the options; found here, not at the first request."""
    try:
        signature = inspect.signature(store)
    except (TypeError, ValueError):
        return []  # no signature to read (a builtin): building the store will tell
    try:
        signature.bind(**options)
    except TypeError as exc:
        name = getattr(store, "__qualname__", repr(store))
        return [
            Error(
                f"CHRONICA['STORE_OPTIONS'] {dict(options)!r} do not fit CHRONICA['STORE']"
                f" {name}: {exc}.",
                hint=f"{name} takes {signature}.",
                id="chronica.E006",
            )
        ]
    return []
