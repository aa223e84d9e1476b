"""Checks of caller input, shared by every Chronicarius call.

Everything a store could not keep the same way on every database is refused here,
before a store is touched, so that no raw database error reaches a caller and
every store behaves alike.

By concern: ``identifiers`` (owners, actors, keys, chronicum IDs), ``jsondata`` (an
actum's ``data`` and its stored text), ``acta`` (the acta and state changes of a
write), ``queries`` (the arguments of the reading calls) and ``parameters`` (those
arguments as the edges spell them). Every public name is also importable from here.
"""

from __future__ import annotations

from .acta import (
    DEFAULT_MAX_ACTUM_BYTES,
    check_actum,
    check_batch,
    check_state_changes,
    check_token_count,
    normalize_key,
)
from .identifiers import (
    CONTROL,
    MAX_LENGTH,
    SURROGATE,
    check_chronicum_id,
    check_identifier,
    check_owner,
    check_text,
    storable,
)
from .jsondata import RawJSON, check_json, compact_json, dumps_data, loads_data
from .parameters import FOLLOW_PARAMETERS, PARAMETERS, WINDOW_PARAMETERS, Parameter
from .queries import MAX_LIST_LIMIT, build_query, check_after, check_listing, check_whole_tool_calls

__all__ = [
    "CONTROL",
    "DEFAULT_MAX_ACTUM_BYTES",
    "FOLLOW_PARAMETERS",
    "MAX_LENGTH",
    "MAX_LIST_LIMIT",
    "PARAMETERS",
    "SURROGATE",
    "WINDOW_PARAMETERS",
    "Parameter",
    "RawJSON",
    "build_query",
    "check_actum",
    "check_after",
    "check_batch",
    "check_chronicum_id",
    "check_identifier",
    "check_json",
    "check_listing",
    "check_owner",
    "check_state_changes",
    "check_text",
    "check_token_count",
    "check_whole_tool_calls",
    "compact_json",
    "dumps_data",
    "loads_data",
    "normalize_key",
    "storable",
]
