"""Search's SQL: an index the database keeps itself, and the one statement of a search.

The database, not Python, keeps the index, so that every writer's rows are in it (the
Go library's seed-only writers, raw SQL) and a row updated or deleted by anyone is
found by what it holds now, or not at all:

* PostgreSQL: an expression index (GIN) on ``vector()``, the ``tsvector`` of an actum's
  content and of the strings inside its ``data`` in ``CHRONICA["SEARCH_CONFIG"]``; a
  search compares the very same expression, so the planner can use the index.
* SQLite: the FTS5 table ``acta_search`` (rowid = the actum's ``seq``), kept by
  triggers on ``acta`` for every INSERT, UPDATE of ``content`` or ``data``, and DELETE.

Both read the first ``SEARCHED_CHARACTERS`` of content and of data's strings: a
``tsvector`` holds at most 1 MB, and an actum that overflowed it could not be written.

Migration ``0012_search`` built both, ``0014_search_bounded`` built them again on the
first characters only, from the templates frozen in it; a test holds them equal to
these.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...search import HIGHLIGHT, SEARCHED_CHARACTERS, SearchQuery
from ...values import ActaQuery, SearchHit
from . import sql
from .rows import acta_of
from .sql import filters

__all__ = [
    "FTS5_OWNER",
    "FTS5_TABLE",
    "FTS5_TEXT",
    "HEADLINE",
    "INDEX_NAME",
    "PG_SEARCH",
    "SQLITE_SEARCH",
    "build_index",
    "document",
    "fts5_match",
    "fts5_owner",
    "search_statement",
    "tsquery",
    "vector",
]

INDEX_NAME = "acta_search"
"""The name of PostgreSQL's index, and of SQLite's FTS5 table."""
FTS5_TABLE = INDEX_NAME

# -- PostgreSQL ------------------------------------------------------------------------


# The strings inside a jsonb, in jsonb's order, as a JSON array.
_STRINGS = "jsonb_path_query_array({data}, 'strict $.** ? (@.type() == \"string\")')"
# A JSON escape of its text (\n, \", \\, \u0001) made a space: left in, "\nkemang" is
# the word "nkemang" to the parser. (An E-string: the same whatever
# standard_conforming_strings says.)
_ESCAPE = r"E'\\\\(u[0-9A-Fa-f]{4}|.)'"


def vector(config: str, table: str = "") -> str:
    """The ``tsvector`` an actum is indexed and searched by (``config``: a checked name,
    ``CHRONICA["SEARCH_CONFIG"]``). Character for character the expression of the index:
    a search that spells it otherwise cannot use it.

    The first ``SEARCHED_CHARACTERS`` of content, and of the strings inside data. A
    jsonb cannot be cut, and an index expression can neither call a set-returning
    function nor hold a subquery, so data is read one of two ways: whole, by
    ``jsonb_to_tsvector``, when its JSON is that short (its strings are then shorter
    still: every actum but a long tool result, indexed exactly as before the bound), or
    else as the text of the array of its strings (``jsonb_path_query_array``, immutable),
    cut, its JSON escapes made spaces."""
    n = SEARCHED_CHARACTERS
    data = f"{table}data"
    strings = _STRINGS.format(data=data)
    return (
        f"(to_tsvector('{config}'::regconfig, left({table}content, {n}))"
        f" || CASE WHEN length({data}::text) > {n}"
        f" THEN to_tsvector('{config}'::regconfig,"
        f" regexp_replace(left({strings}::text, {n}), {_ESCAPE}, ' ', 'g'))"
        f" ELSE jsonb_to_tsvector('{config}'::regconfig, COALESCE({data}, 'null'::jsonb),"
        " '[\"string\"]'::jsonb) END)"
    )


def tsquery(config: str) -> str:
    """The query, from its ``websearch`` form (``chronica.search``)."""
    return f"websearch_to_tsquery('{config}'::regconfig, %(query)s)"


def document(table: str) -> str:
    # The text a snippet is cut from: what search reads of content, then of the strings
    # inside data (SQLite's snippet() is cut from its index's text, as long). The
    # strings come from one array (jsonb_path_query, a row each, takes time growing
    # with their number squared: 28 s for 580,000).
    n = SEARCHED_CHARACTERS
    strings = _STRINGS.format(data=f"{table}data")
    return (
        f"concat_ws(' ', left({table}content, {n}), left((SELECT string_agg(s, ' ')"
        f" FROM jsonb_array_elements_text({strings}) s), {n}))"
    )


HEADLINE = (
    f"StartSel={HIGHLIGHT[0]}, StopSel={HIGHLIGHT[1]}, MinWords=8, MaxWords=24,"
    ' MaxFragments=1, FragmentDelimiter=" … "'
)

# The owner's acta that match, best first, ties newest first; the owner's chronica (in
# the namespace, if one is named) read first, as an array: one probe of the search
# index ANDed with one of (chronicum_id), not one of each per chronicum. The
# credential's chronica are {only}; the snippets are cut only for the page's hits. The
# query is a constant of the statement (not a CTE's column), so the index can serve it.
PG_SEARCH = """
SELECT {a_columns}, h.w_rank,
       ts_headline('{config}'::regconfig, {document}, {tsquery}, %(headline)s)
FROM (
    SELECT a.seq, ts_rank_cd({vector}, {tsquery}) AS w_rank
    FROM {acta} a
    WHERE a.chronicum_id = ANY(ARRAY(SELECT c.id FROM {chronica} c
                                     WHERE c.owner_id = %(owner_id)s{namespace_is}))
      AND {vector} @@ {tsquery}{filters}{only}
    ORDER BY w_rank DESC, a.seq DESC LIMIT %(limit)s OFFSET %(offset)s
) h JOIN {acta} a ON a.seq = h.seq
ORDER BY h.w_rank DESC, h.seq DESC
"""


def build_index(config: str) -> list[str]:
    """The statements that build PostgreSQL's index again for ``config`` (a checked
    name, ``CHRONICA["SEARCH_CONFIG"]``), writers never locked out: outside a
    transaction (``chronica_search --build-index``)."""
    return [
        f"DROP INDEX CONCURRENTLY IF EXISTS {INDEX_NAME}",
        f"CREATE INDEX CONCURRENTLY {INDEX_NAME} ON acta USING GIN ({vector(config)})",
    ]


# -- SQLite ---------------------------------------------------------------------------


def FTS5_TEXT(row: str) -> str:
    """What the FTS5 table holds of the actum ``row`` (``new``, ``a``): the first
    ``SEARCHED_CHARACTERS`` of its content and of the strings inside its data (SQLite
    stores ``data`` as JSON text; Django's JSONField checks that it is valid). FTS5 has
    no limit of its own: the bound is PostgreSQL's, kept here so that both databases
    find the same acta, and a write's indexing costs as little."""
    n = SEARCHED_CHARACTERS
    return (
        f"substr({row}.content, 1, {n}) || ' ' || substr(COALESCE((SELECT group_concat(value, ' ')"
        f" FROM json_tree({row}.data) WHERE type = 'text'), ''), 1, {n})"
    )


def FTS5_OWNER(row: str) -> str:
    """The owner of the actum ``row``'s chronicum as one FTS5 word: ``o`` and the owner
    ID's UTF-8 in hex (``fts5_owner``). A search asks for it first, so that FTS5 reads
    only that owner's entries of a common word; the owner check of the statement stays
    the authority."""
    return f"(SELECT 'o' || hex(owner_id) FROM chronica WHERE id = {row}.chronicum_id)"


def fts5_owner(owner_id: str) -> str:
    """The word ``FTS5_OWNER`` holds for ``owner_id``."""
    return "o" + owner_id.encode().hex().upper()


def fts5_match(owner_id: str | None, query: SearchQuery) -> str:
    """The FTS5 query: the owner's word (unless ``None``: any owner), and the query's
    terms in the text column only."""
    text = f"text : ({query.fts5()})"
    return text if owner_id is None else f'owner : "{fts5_owner(owner_id)}" AND {text}'


SQLITE_SEARCH = f"""
SELECT {{a_columns}}, -bm25({FTS5_TABLE}, 1.0, 0.0) AS w_rank,
       snippet({FTS5_TABLE}, 0, '{HIGHLIGHT[0]}', '{HIGHLIGHT[1]}', '…', 24)
FROM {FTS5_TABLE} JOIN {{acta}} a ON a.seq = {FTS5_TABLE}.rowid
WHERE {FTS5_TABLE} MATCH %(query)s AND a.chronicum_id IN (
    SELECT c.id FROM {{chronica}} c WHERE c.owner_id = %(owner_id)s{{namespace_is}}
){{filters}}{{only}}
ORDER BY w_rank DESC, a.seq DESC LIMIT %(limit)s OFFSET %(offset)s
"""

# -- both ---------------------------------------------------------------------------------


def search_statement(
    template: str,
    tables: dict[str, str],
    owner_id: str,
    query: SearchQuery,
    wanted: ActaQuery,
    chronica: frozenset[str] | None,
    limit: int,
    offset: int,
    namespace: str | None,
    **pieces: str,
) -> tuple[tuple[str, dict[str, Any]], Callable[[list[tuple[Any, ...]]], list[SearchHit]]]:
    """The statement of a search (``template`` with the owner, ``wanted``'s filters, the
    chronica allowed) and what turns its rows (the chronicum's ID, the actum's columns,
    rank, snippet) into hits. The query goes in as ``%(query)s``: the caller sets it in
    its database's language."""
    where, params = filters(wanted)
    where = where.replace(" AND ", " AND a.")
    only = ""
    if chronica is not None:
        names = [f"only_{i}" for i in range(len(chronica))]
        only = f" AND a.chronicum_id IN ({', '.join(f'%({n})s' for n in names)})"
        params.update(zip(names, sorted(chronica), strict=True))
    namespace_is = ""
    if namespace is not None:
        namespace_is = " AND c.namespace = %(namespace)s"
        params["namespace"] = namespace
    params.update(owner_id=owner_id, limit=limit, offset=offset)
    columns = "a.chronicum_id, " + ", ".join("a." + column for column in sql.ACTUM_COLUMNS)
    text = template.format(
        **tables,
        a_columns=columns,
        filters=where,
        only=only,
        namespace_is=namespace_is,
        **pieces,
    )

    def hits(rows: list[tuple[Any, ...]]) -> list[SearchHit]:
        return [
            SearchHit(acta_of(row[0], [row[1:-2]])[0], float(row[-2]), row[-1] or "")
            for row in rows
        ]

    return (text, params), hits
