"""``settings.CHRONICA``, each value checked when first read and kept until a setting
changes (``setting_changed``, which ``override_settings`` sends), as DRF's
``api_settings`` does: a request reads several of them, and the checks, the imports of
dotted paths and the lookups were a part of every request's time."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.utils.module_loading import import_string

from .interfaces import Store
from .validation.acta import DEFAULT_MAX_ACTUM_BYTES

DEFAULTS: dict[str, Any] = {
    "STORE": "chronica.stores.db.DjangoStore",
    "STORE_OPTIONS": {},
    "OWNER_ID": "chronica.api.owner_id_from_user",
    "TOKEN_COUNTER": "chronica.tokens.estimate_tokens",
    "MAX_ACTUM_BYTES": DEFAULT_MAX_ACTUM_BYTES,
    "API_MAX_ACTA": 1000,
    "API_MAX_RESPONSE_BYTES": 8 * 1024 * 1024,
    "FOLLOW_POLL_INTERVAL": 1.0,
    "AUTO_CREATE": True,
    "LISTEN_DATABASE": None,
    "READ_DATABASES": (),
    "AGENT_THROTTLE_RATE": "1000/min",
    "OTEL_RECORD_CONTENT": False,
    "SEARCH_CONFIG": "simple",
    "RETENTION": [],
}

RETIRED: dict[str, str] = {
    "ASYNC_POOL_SIZE": "0.3.0: the asyncio path runs in Django's executor",
}
"""Keys that no longer have an effect, and since when and why: ``manage.py check``
warns about them (chronica.W005) instead of calling them unknown."""


def _resolve(name: str, value: Any) -> Callable[..., Any]:
    """A dotted path or a callable; anything else is an ImproperlyConfigured naming the setting."""
    if isinstance(value, str):
        try:
            value = import_string(value)
        except ImportError as exc:
            raise ImproperlyConfigured(
                f"CHRONICA[{name!r}] = {value!r} cannot be imported: {exc}"
            ) from exc
    if not callable(value):
        raise ImproperlyConfigured(f"CHRONICA[{name!r}] must be a callable or a dotted path to one")
    return value  # type: ignore[no-any-return]


def _limit(name: str, value: Any, *, allow_none: bool) -> int | None:
    """A positive int setting (or ``None`` where that means no limit)."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ImproperlyConfigured(
            f"CHRONICA[{name!r}] must be a positive int{' or None' if allow_none else ''},"
            f" not {value!r}"
        )
    return value


def is_postgresql(database: Mapping[str, Any]) -> bool:
    """Whether a ``DATABASES`` entry is PostgreSQL (Django's backend or PostGIS's)."""
    engine = str(database.get("ENGINE", ""))
    return "postgresql" in engine or "postgis" in engine


T = TypeVar("T")


def _kept(method: Callable[[ChronicaSettings], T]) -> Callable[[ChronicaSettings], T]:
    """``method``'s value, worked out once and kept until a setting changes. An error
    is not kept: a wrong setting raises on every read."""
    name = method.__name__

    def kept(self: ChronicaSettings) -> T:
        try:
            return self._kept[name]  # type: ignore[no-any-return]
        except KeyError:
            value = self._kept[name] = method(self)
            return value

    kept.__name__, kept.__doc__ = name, method.__doc__
    return kept


class ChronicaSettings:
    """One typed property per setting, checked when first read and kept until a setting
    changes (``setting_changed``)."""

    def __init__(self) -> None:
        self._kept: dict[str, Any] = {}

    def forget(self) -> None:
        """Drop the kept values: the next read takes ``django.conf.settings`` again."""
        self._kept.clear()

    @property
    def user_settings(self) -> Mapping[str, Any]:
        from django.conf import settings

        value = getattr(settings, "CHRONICA", None)
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise ImproperlyConfigured("The CHRONICA setting must be a dict")
        return value

    def _get(self, name: str) -> Any:
        return self.user_settings.get(name, DEFAULTS[name])

    @property
    @_kept
    def STORE(self) -> str | Callable[..., Store]:
        return self._get("STORE")  # type: ignore[no-any-return]

    @property
    @_kept
    def STORE_OPTIONS(self) -> Mapping[str, Any]:
        options = self._get("STORE_OPTIONS")
        if not isinstance(options, Mapping):
            raise ImproperlyConfigured(
                "CHRONICA['STORE_OPTIONS'] must be a dict of keyword arguments"
            )
        return options

    @property
    @_kept
    def OWNER_ID(self) -> str | Callable[[Any], str]:
        return self._get("OWNER_ID")  # type: ignore[no-any-return]

    @property
    @_kept
    def TOKEN_COUNTER(self) -> str | Callable[[Any], int]:
        return self._get("TOKEN_COUNTER")  # type: ignore[no-any-return]

    @property
    @_kept
    def MAX_ACTUM_BYTES(self) -> int | None:
        return _limit("MAX_ACTUM_BYTES", self._get("MAX_ACTUM_BYTES"), allow_none=True)

    @property
    @_kept
    def API_MAX_ACTA(self) -> int:
        value = _limit("API_MAX_ACTA", self._get("API_MAX_ACTA"), allow_none=False)
        assert value is not None
        return value

    @property
    @_kept
    def API_MAX_RESPONSE_BYTES(self) -> int:
        """The byte budget of one window page of the API (content and data, UTF-8): a
        page is cut early there, and its ``Link: rel="next"`` leads to the rest."""
        value = _limit(
            "API_MAX_RESPONSE_BYTES", self._get("API_MAX_RESPONSE_BYTES"), allow_none=False
        )
        assert value is not None
        return value

    @property
    @_kept
    def FOLLOW_POLL_INTERVAL(self) -> float:
        """Seconds a follower waits before it reads again when nothing woke it."""
        value = self._get("FOLLOW_POLL_INTERVAL")
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 3600:
            raise ImproperlyConfigured(
                "CHRONICA['FOLLOW_POLL_INTERVAL'] must be a number of seconds above 0"
                f" and at most 3600, not {value!r}"
            )
        return float(value)

    @property
    @_kept
    def AUTO_CREATE(self) -> bool:
        """Whether a write into a missing chronicum creates it (the seed's rule 5);
        ``False``: only ``create_chronicum`` creates."""
        value = self._get("AUTO_CREATE")
        if not isinstance(value, bool):
            raise ImproperlyConfigured(
                f"CHRONICA['AUTO_CREATE'] must be True or False, not {value!r}"
            )
        return value

    @property
    @_kept
    def LISTEN_DATABASE(self) -> str | None:
        """The alias of ``DATABASES`` the LISTEN connection of live follow goes to, past
        any pooler; ``None``: the store's own database."""
        from django.conf import settings

        value = self._get("LISTEN_DATABASE")
        if value is None:
            return None
        if not isinstance(value, str) or value not in settings.DATABASES:
            raise ImproperlyConfigured(
                "CHRONICA['LISTEN_DATABASE'] must be None or an alias of DATABASES"
                f" ({', '.join(settings.DATABASES)}), not {value!r}"
            )
        if not is_postgresql(settings.DATABASES[value]):
            engine = settings.DATABASES[value].get("ENGINE")
            raise ImproperlyConfigured(
                f"CHRONICA['LISTEN_DATABASE'] = {value!r} must be a PostgreSQL database,"
                f" not {engine or 'one without an ENGINE'}"
            )
        return value

    @property
    @_kept
    def READ_DATABASES(self) -> tuple[str, ...]:
        """Aliases of DATABASES (PostgreSQL streaming replicas of the database chronica
        writes to) that windows, listings and get_chronicum may read from."""
        value = self._get("READ_DATABASES")
        if isinstance(value, str) or not isinstance(value, list | tuple):
            raise ImproperlyConfigured(
                f"CHRONICA['READ_DATABASES'] must be a list of database aliases, not {value!r}"
            )
        if not all(isinstance(alias, str) and alias for alias in value):
            raise ImproperlyConfigured(
                f"CHRONICA['READ_DATABASES'] must hold database aliases (str), not {value!r}"
            )
        return tuple(value)

    @property
    @_kept
    def AGENT_THROTTLE_RATE(self) -> str | None:
        """The API requests one agent credential may make (DRF's ``"1000/min"``
        form: a number, ``/``, s, m, h or d); ``None``: no limit."""
        value = self._get("AGENT_THROTTLE_RATE")
        if value is None:
            return None
        if not isinstance(value, str) or not re.fullmatch(r"\d+/[smhd]\w*", value):
            raise ImproperlyConfigured(
                "CHRONICA['AGENT_THROTTLE_RATE'] must be a rate such as '1000/min', or None,"
                f" not {value!r}"
            )
        return value

    @property
    @_kept
    def OTEL_RECORD_CONTENT(self) -> bool:
        """Whether the OpenTelemetry spans of chronica's calls carry the content and
        data of the acta they write or read (``gen_ai.memory.content``); ``False``: never."""
        value = self._get("OTEL_RECORD_CONTENT")
        if not isinstance(value, bool):
            raise ImproperlyConfigured(
                f"CHRONICA['OTEL_RECORD_CONTENT'] must be True or False, not {value!r}"
            )
        return value

    @property
    @_kept
    def SEARCH_CONFIG(self) -> str:
        """PostgreSQL's text search configuration of search (``"simple"``: every language,
        no stemming; ``"english"`` stems and drops stop words): a name, written into the
        SQL of the index and of every search, so only a plain identifier."""
        value = self._get("SEARCH_CONFIG")
        if not isinstance(value, str) or not re.fullmatch(
            r"[A-Za-z_][A-Za-z0-9_]{0,62}(\.[A-Za-z_][A-Za-z0-9_]{0,62})?", value
        ):
            raise ImproperlyConfigured(
                "CHRONICA['SEARCH_CONFIG'] must name a PostgreSQL text search configuration"
                f" (such as 'simple' or 'english'), not {value!r}"
            )
        return value

    @property
    @_kept
    def RETENTION(self) -> list[Any]:
        """The retention rules ``apply_retention`` follows (``chronica.retention``); a
        malformed one is ``ImproperlyConfigured`` here and chronica.E019 in ``check``."""
        from .validation.retention import parse_rules

        value = self._get("RETENTION")
        try:
            parse_rules(value)
        except ValueError as exc:
            raise ImproperlyConfigured(str(exc)) from None
        return list(value or [])

    @_kept
    def token_counter(self) -> Callable[[Any], int]:
        """``CHRONICA['TOKEN_COUNTER']``: ``(Actum) -> int``, taken when an actum is recorded."""
        return _resolve("TOKEN_COUNTER", self.TOKEN_COUNTER)

    def build_store(self) -> Store:
        """Call ``CHRONICA['STORE']`` with ``CHRONICA['STORE_OPTIONS']``."""
        factory = _resolve("STORE", self.STORE)
        options = dict(self.STORE_OPTIONS)
        try:
            store = factory(**options)
        except TypeError as exc:
            raise ImproperlyConfigured(
                f"CHRONICA['STORE'] does not accept CHRONICA['STORE_OPTIONS'] {options!r}: {exc}"
            ) from exc
        if not isinstance(store, Store):
            raise ImproperlyConfigured(
                f"CHRONICA['STORE'] built {type(store).__name__}, which lacks the Store methods"
                " create, record, acta and get"
            )
        return store

    @_kept
    def owner_id_function(self) -> Callable[[Any], str]:
        """``CHRONICA['OWNER_ID']``: the callable that turns ``request.user`` into an owner."""
        return _resolve("OWNER_ID", self.OWNER_ID)


chronica_settings = ChronicaSettings()


def _on_setting_changed(*, setting: str, **kwargs: Any) -> None:
    # Any setting: a few values depend on DATABASES as well as on CHRONICA.
    chronica_settings.forget()


setting_changed.connect(_on_setting_changed, dispatch_uid="chronica.conf.setting_changed")
