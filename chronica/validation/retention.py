"""``CHRONICA["RETENTION"]``: the rules ``apply_retention`` follows, read and checked
here (``manage.py check`` reports a malformed rule as chronica.E019).

A rule is ``{"older_than": "90d", "kinds": [...] (optional), "action": "redact" |
"delete"}``: ``"redact"`` empties the acta (of those kinds) recorded longer ago than
``older_than``; ``"delete"`` removes the chronica whose last activity is older, with
all their acta (a ``"delete"`` rule takes no ``kinds``: it removes whole chronica).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Mapping
from typing import Any

from ..values import ActumKind
from .parameters import parse_duration

__all__ = ["ACTIONS", "Rule", "parse_rules"]

ACTIONS = ("redact", "delete")


@dataclasses.dataclass(frozen=True)
class Rule:
    """One retention rule, checked."""

    older_than: dt.timedelta
    action: str
    kinds: frozenset[ActumKind] = frozenset()
    text: str = ""

    @property
    def label(self) -> str:
        """How ``apply_retention`` and ``chronica_retention`` name the rule."""
        kinds = f" {','.join(sorted(self.kinds))}" if self.kinds else ""
        return f"{self.action}{kinds} older than {self.text}"


def parse_rules(rules: Any) -> list[Rule]:
    """The rules of ``CHRONICA["RETENTION"]``, checked; ``ValueError`` naming the rule
    and what is wrong with it."""
    if rules is None:
        return []
    if isinstance(rules, (str, bytes, Mapping)) or not isinstance(rules, (list, tuple)):
        raise ValueError("CHRONICA['RETENTION'] must be a list of rules (dicts)")
    parsed = []
    for i, rule in enumerate(rules):
        where = f"CHRONICA['RETENTION'][{i}]"
        if not isinstance(rule, Mapping):
            raise ValueError(f"{where} must be a dict, not {type(rule).__name__}")
        unknown = sorted(set(rule) - {"older_than", "kinds", "action"})
        if unknown:
            raise ValueError(f"{where} has unknown keys: {', '.join(map(str, unknown))}")
        action = rule.get("action")
        if action not in ACTIONS:
            raise ValueError(f"{where}['action'] must be 'redact' or 'delete', not {action!r}")
        text = rule.get("older_than")
        if not isinstance(text, str):
            raise ValueError(f"{where}['older_than'] must be a duration such as '90d'")
        try:
            older_than = parse_duration(text)
        except ValueError as exc:
            raise ValueError(f"{where}['older_than']: {exc}") from None
        if older_than <= dt.timedelta(0):
            raise ValueError(f"{where}['older_than'] must be longer than nothing")
        kinds_given = rule.get("kinds")
        kinds: frozenset[ActumKind] = frozenset()
        if kinds_given is not None:
            if action == "delete":
                raise ValueError(f"{where}: a 'delete' rule removes whole chronica; no 'kinds'")
            if isinstance(kinds_given, str) or not isinstance(kinds_given, (list, tuple)):
                raise ValueError(f"{where}['kinds'] must be a list of actum kinds")
            try:
                kinds = frozenset(ActumKind(k) for k in kinds_given)
            except ValueError:
                raise ValueError(
                    f"{where}['kinds'] holds an unknown kind (known:"
                    f" {', '.join(k.value for k in ActumKind)})"
                ) from None
            if not kinds:
                raise ValueError(f"{where}['kinds'] is empty: leave it out for every kind")
        parsed.append(Rule(older_than, action, kinds, text.strip()))
    return parsed
