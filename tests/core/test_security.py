"""Security: rafa never sees ardian's dinner-friday, the admin is for staff, and no
value ever becomes part of an SQL string.

Through chronica.services and through the HTTP API (``api/`` in tests/urls.py),
bad input in any field is a 400 that writes nothing, and hostile text that is
valid round-trips exactly.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from django.db import connection
from django.test import override_settings
from django.urls import reverse
from rest_framework.test import APIClient

import chronica
from chronica import Actum, ChronicumNotFound, InvalidActum, services

from .. import scenario
from ..scenario import BOOKING_REPLY, BOOKING_REPLY_REWORDED, CHRONICUM, OWNER

KEY = "booking-reply-1"
REPLY = {"kind": "message", "actor_kind": "agent", "actor": "booking", "content": BOOKING_REPLY}
TOOL = {"kind": "tool_request", "actor_kind": "agent", "actor": "booking", "call_id": "book-1"}


@pytest.fixture(autouse=True)
def fresh_chronicarius():
    services.reset_chronicarius()
    yield
    services.reset_chronicarius()


# -- owner isolation through chronica.services ----------------------------------


@pytest.fixture
def dinner():
    """ardian's dinner-friday, seven acta and the booking reply, through the services."""
    acta = [services.record_actum(OWNER, a) for a in scenario.acta()]
    acta.append(services.record_actum(OWNER, scenario.booking_reply(), idempotency_key=KEY))
    return acta


RAFAS = ["rafa", "Ardian", "ardian ", " ardian", "ardian' OR '1'='1", "%", "*", "ardian\n"]


@pytest.mark.django_db
@pytest.mark.parametrize("rafa", RAFAS)
def test_only_ardian_reads_or_writes_dinner_friday(dinner, rafa):
    for chronicum_id in (CHRONICUM, "never-used"):
        with pytest.raises(ChronicumNotFound) as caught:
            services.get_acta(rafa, chronicum_id)
        assert str(caught.value) == chronicum_id
        with pytest.raises(ChronicumNotFound):
            services.get_chronicum(rafa, chronicum_id)
    # ardian's key gives rafa nothing back, neither the stored reply nor a write. An
    # owner with a control character cannot write at all.
    refused = InvalidActum if "\n" in rafa else ChronicumNotFound
    with pytest.raises(refused):
        services.record_actum(
            rafa, scenario.booking_reply(BOOKING_REPLY_REWORDED), idempotency_key=KEY
        )
    with pytest.raises(refused):
        services.record_actum(rafa, scenario.booking_reply(BOOKING_REPLY_REWORDED))
    assert services.get_acta(OWNER, CHRONICUM) == dinner
    assert services.get_chronicum(OWNER, CHRONICUM).last_activity_at == dinner[-1].at


# -- the API --------------------------------------------------------------------


def acta_url(chronicum_id: str = CHRONICUM) -> str:
    return reverse("chronica:chronicum-acta", args=[chronicum_id])


def chronicum_url(chronicum_id: str = CHRONICUM) -> str:
    return reverse("chronica:chronicum-detail", args=[chronicum_id])


def client_for(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def post(client, payload, chronicum_id=CHRONICUM, key=None):
    headers = {} if key is None else {"Idempotency-Key": key}
    # Serialized here, so that the body carries exactly these characters (escapes included).
    return client.post(
        acta_url(chronicum_id),
        json.dumps(payload),
        content_type="application/json",
        headers=headers,
    )


@pytest.fixture
def ardian(django_user_model):
    return client_for(django_user_model.objects.create_user("ardian"))


@pytest.fixture
def rafa(django_user_model):
    return client_for(django_user_model.objects.create_user("rafa"))


@pytest.fixture
def api_dinner(ardian):
    for actum in scenario.acta():
        payload = {
            "kind": actum.kind.value,
            "actor_kind": actum.actor_kind.value,
            "actor": actum.actor,
            "content": actum.content,
        }
        assert post(ardian, payload).status_code == 201
    reply = post(ardian, REPLY, key=KEY)
    assert reply.status_code == 201
    return ardian.get(acta_url()).json()


@pytest.mark.django_db
def test_rafa_gets_the_same_404_as_for_a_session_never_used(ardian, rafa, api_dinner):
    for url in (chronicum_url, acta_url):
        theirs, nobodys = rafa.get(url(CHRONICUM)), rafa.get(url("never-used"))
        assert theirs.status_code == nobodys.status_code == 404
        assert theirs.content == nobodys.content
    for key in (None, KEY):
        written = post(rafa, {**REPLY, "content": BOOKING_REPLY_REWORDED}, key=key)
        assert written.status_code == 404
        assert BOOKING_REPLY.encode() not in written.content
    assert ardian.get(acta_url()).json() == api_dinner


@pytest.mark.django_db
def test_signed_out_gets_nothing(api_dinner):
    anonymous = APIClient()
    for response in (
        anonymous.get(chronicum_url()),
        anonymous.get(acta_url()),
        post(anonymous, REPLY),
        post(anonymous, [REPLY, REPLY]),
        anonymous.get("/api/chronica/"),
        anonymous.post("/api/chronica/", {"id": "dinner-saturday"}, format="json"),
        anonymous.delete(chronicum_url()),
    ):
        assert response.status_code in (401, 403)
        assert BOOKING_REPLY.encode() not in response.content
        assert b"Rumah" not in response.content


# Each bad value, where it goes, and how the 400 names it.
API_REFUSED = [
    pytest.param({**REPLY, "content": "RT-\x004821"}, CHRONICUM, None, "NUL", id="content-nul"),
    pytest.param({**REPLY, "actor": "book\x00ing"}, CHRONICUM, None, "NUL", id="actor-nul"),
    pytest.param({**REPLY, "content": "RT \ud83c"}, CHRONICUM, None, "surrogate", id="surrogate"),
    pytest.param({**REPLY, "actor": "\udfffbooking"}, CHRONICUM, None, "surrogate", id="actor-sur"),
    pytest.param({**REPLY, "actor": "b" * 256}, CHRONICUM, None, "255", id="actor-256"),
    pytest.param(REPLY, "d" * 256, None, "255", id="chronicum-id-256"),
    pytest.param(REPLY, "dinner\x00friday", None, "NUL", id="chronicum-id-nul"),
    pytest.param(REPLY, CHRONICUM, "k" * 256, "255", id="key-256"),
    pytest.param({**REPLY, "kind": "message'; DROP TABLE acta; --"}, CHRONICUM, None, "kind"),
    pytest.param({**REPLY, "kind": ["message"]}, CHRONICUM, None, "kind", id="kind-list"),
    pytest.param({**REPLY, "actor_kind": 2}, CHRONICUM, None, "actor_kind", id="actor-kind-int"),
    pytest.param({**REPLY, "actor": {"id": 1}}, CHRONICUM, None, "actor", id="actor-object"),
    pytest.param({**REPLY, "content": None}, CHRONICUM, None, "content", id="content-null"),
    pytest.param({**REPLY, "content": 4821}, CHRONICUM, None, "content", id="content-int"),
    pytest.param({**REPLY, "content": True}, CHRONICUM, None, "content", id="content-bool"),
    pytest.param({**TOOL, "call_id": "book\x00-1"}, CHRONICUM, None, "NUL", id="call-id-nul"),
    pytest.param({**TOOL, "call_id": "book\r\n-1"}, CHRONICUM, None, "call_id", id="call-id-crlf"),
    pytest.param({**TOOL, "data": {"ref\x00": 1}}, CHRONICUM, None, "NUL", id="data-key-nul"),
    pytest.param({**TOOL, "data": ["RT \ud83c"]}, CHRONICUM, None, "surrogate", id="data-sur"),
    pytest.param([TOOL, {**TOOL, "data": "\x00"}], CHRONICUM, None, "actum 1: ", id="batch"),
]


@pytest.mark.django_db
@pytest.mark.parametrize(("payload", "chronicum_id", "key", "said"), API_REFUSED)
def test_bad_input_through_the_api_is_a_400_that_writes_nothing(
    ardian, api_dinner, payload, chronicum_id, key, said
):
    for target in (
        (chronicum_id, "dinner-saturday") if chronicum_id == CHRONICUM else (chronicum_id,)
    ):
        response = post(ardian, payload, target, key)
        assert response.status_code == 400, response.content
        assert set(response.json()) == {"detail"}
        assert said in response.json()["detail"]
    assert ardian.get(acta_url()).json() == api_dinner
    assert ardian.get(chronicum_url("dinner-saturday")).status_code == 404


HOSTILE_BUT_VALID = [
    "'; DROP TABLE acta; --",
    'Robert"); DELETE FROM chronica WHERE ("1"="1',
    "%s %(owner)s %% {0} $1 \\x00 \\' /* -- */",
    "🍽 𠜎 \U0010ffff 👨‍👩‍👧‍👦",
    "<script>alert('RT-4821')</script>",
]


TEN_MB = ("Rumah Teduh 🍽 'quiet' table; " * 400_000)[: 10 * 1024 * 1024]


@pytest.mark.django_db
@pytest.mark.parametrize("text", HOSTILE_BUT_VALID)
def test_hostile_text_round_trips_through_the_api(ardian, text):
    # A chronicum ID holds no "/" (the API's routes stop there) and no format
    # character such as the emoji's zero-width joiners (rule 2); the other fields do.
    chronicum_id = f"dinner {text}".replace("/", "").replace("\u200d", "")
    payload = {
        "kind": "tool_response",
        "actor_kind": "agent",
        "actor": text,
        "content": text,
        "call_id": text,
        "data": {text: [text, {"content": text}]},
    }
    key = text if text.isascii() else KEY  # an HTTP header carries Latin-1 only
    created = post(ardian, payload, chronicum_id, key=key)
    assert created.status_code == 201, created.content
    replayed = post(ardian, {**payload, "content": "reworded"}, chronicum_id, key=key)
    assert replayed.status_code == 200
    assert replayed.json() == created.json()
    [read] = ardian.get(acta_url(chronicum_id)).json()
    assert read == created.json()
    assert (read["chronicum_id"], read["actor"], read["content"]) == (chronicum_id, text, text)
    assert (read["call_id"], read["data"]) == (text, payload["data"])


@pytest.mark.django_db
@pytest.mark.parametrize("text", HOSTILE_BUT_VALID)
def test_hostile_text_in_a_query_is_a_400(ardian, api_dinner, text):
    for query in ({"before": text}, {"cursor": text}, {"kind": text}, {"max_tokens": text}):
        url = "/api/chronica/" if "cursor" in query else acta_url()
        response = ardian.get(url, query)
        assert response.status_code == 400, (query, response.content)
        assert set(response.json()) == {"detail"}
    response = ardian.post("/api/chronica/", {"id": text}, format="json")
    assert response.status_code in (201, 400)
    assert ardian.get(acta_url()).json() == api_dinner


@pytest.mark.django_db
def test_ten_megabytes_over_the_projects_upload_limit_are_refused(ardian, api_dinner):
    # Django's DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MB by default) is the project's to choose.
    response = post(ardian, {**REPLY, "actor": "search", "content": TEN_MB})
    assert response.status_code == 413
    assert "DATA_UPLOAD_MAX_MEMORY_SIZE" in response.json()["detail"]
    assert ardian.get(acta_url()).json() == api_dinner


@pytest.mark.django_db
@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=64 * 1024 * 1024)
def test_ten_megabytes_are_over_chronicas_default_actum_limit(ardian, api_dinner):
    response = post(ardian, {**REPLY, "actor": "search", "content": TEN_MB})
    assert response.status_code == 400
    assert "MAX_ACTUM_BYTES" in response.json()["detail"]
    assert ardian.get(acta_url()).json() == api_dinner


@pytest.mark.django_db
@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=64 * 1024 * 1024, CHRONICA={"MAX_ACTUM_BYTES": None})
def test_ten_megabytes_within_the_projects_upload_limit_round_trip(ardian, api_dinner):
    response = post(ardian, {**REPLY, "actor": "search", "content": TEN_MB})
    assert response.status_code == 201
    assert response.json()["content"] == TEN_MB
    assert ardian.get(acta_url()).json()[-1]["content"] == TEN_MB


# -- the admin ------------------------------------------------------------------

ADMIN_PAGES = [
    "admin:chronica_chronicum_changelist",
    "admin:chronica_actum_changelist",
]


@pytest.fixture
def admin_pages(dinner):
    pages = [reverse(name) for name in ADMIN_PAGES]
    return [*pages, reverse("admin:chronica_chronicum_change", args=[CHRONICUM])]


@pytest.mark.django_db
def test_the_admin_refuses_anyone_not_staff(client, django_user_model, admin_pages):
    ardian = django_user_model.objects.create_user("ardian", is_staff=False)
    for signed_in in (False, True):
        if signed_in:
            client.force_login(ardian)
        for page in admin_pages:
            response = client.get(page)
            assert response.status_code == 302, page
            assert response["Location"].startswith(reverse("admin:login"))


@pytest.mark.django_db
def test_staff_without_permission_is_forbidden(client, django_user_model, admin_pages):
    client.force_login(django_user_model.objects.create_user("helpdesk", is_staff=True))
    for page in admin_pages:
        assert client.get(page).status_code == 403, page


@pytest.mark.django_db
def test_a_superuser_browses_dinner_friday(admin_client, admin_pages):
    for page in admin_pages:
        response = admin_client.get(page)
        assert response.status_code == 200, page
    assert b"Rumah Teduh" in admin_client.get(admin_pages[-1]).content


# -- no value formatted into SQL ------------------------------------------------

SQL_CALLS = {"execute", "executemany", "raw", "extra", "RawSQL"}
PACKAGE = Path(chronica.__file__).parent


def formatted(node: ast.AST) -> bool:
    """Whether ``node`` builds a string at run time: an f-string, ``%``, ``+`` or ``.format``."""
    if isinstance(node, ast.JoinedStr):
        return any(isinstance(part, ast.FormattedValue) for part in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mod, ast.Add)):
        return True
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("format", "join", "replace")
    )


def constant_sql(
    node: ast.AST, constants: dict[str, ast.AST], seen: frozenset = frozenset()
) -> bool:
    """SQL fixed when the module is imported: a literal, a module-level name of such SQL
    (the table names taken from the models, for example), or an f-string, ``+``,
    ``.format()`` or ``.replace()`` of those. No value of a call can reach it."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Name):
        if node.id in seen or node.id not in constants:
            return node.id in seen
        return constant_sql(constants[node.id], constants, seen | {node.id})
    if isinstance(node, ast.Attribute):  # models.Actum._meta.db_table
        return node.attr == "db_table"
    if isinstance(node, ast.Subscript):  # one of several constant statements
        return constant_sql(node.value, constants, seen)
    if isinstance(node, ast.Dict | ast.DictComp):  # statements by vendor, built at import
        return True
    if isinstance(node, ast.JoinedStr):
        return all(
            constant_sql(part.value, constants, seen)
            for part in node.values
            if isinstance(part, ast.FormattedValue)
        )
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return constant_sql(node.left, constants, seen) and constant_sql(
            node.right, constants, seen
        )
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return (
            node.func.attr in ("format", "replace")
            and constant_sql(node.func.value, constants, seen)
            and all(constant_sql(a, constants, seen) for a in node.args)
            and all(constant_sql(k.value, constants, seen) for k in node.keywords)
        )
    return False


def sql_calls(tree: ast.AST):
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        name = getattr(node.func, "attr", getattr(node.func, "id", None))
        if name in SQL_CALLS:
            yield node


@pytest.mark.parametrize(
    "module", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE))
)
def test_no_sql_is_built_inline_from_values(module):
    tree = ast.parse(module.read_text(), filename=str(module))
    constants = {
        target.id: node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name) and (target.id.isupper() or target.id.startswith("_"))
    }
    for call in sql_calls(tree):
        sql = call.args[0]
        where = f"{module.name}:{call.lineno}"
        if formatted(sql) or (isinstance(sql, ast.Name) and sql.id in constants):
            assert constant_sql(sql, constants), f"{where}: SQL built inline from a value"


MARKERS = {
    "owner": "owner-7f3a",
    "chronicum_id": "chronicum-7f3a",
    "actor": "actor-7f3a",
    "content": "content-7f3a",
    "key": "key-7f3a",
}


def flatten(params):
    """The values of a statement's parameters, through executemany's rows and arrays."""
    for param in params:
        if isinstance(param, list | tuple):
            yield from flatten(param)
        else:
            yield param


@pytest.mark.django_db
def test_values_travel_only_as_parameters():
    """Every statement chronica sends, on this run's database, while ardian's values are
    written and read: none of them appears in the SQL text; each is a parameter."""
    seen: list[tuple[str, tuple]] = []

    def spy(execute, sql, params, many, context):
        seen.append((sql, tuple((params.values() if isinstance(params, dict) else params) or ())))
        return execute(sql, params, many, context)

    actum = Actum(
        chronicum_id=MARKERS["chronicum_id"],
        kind="tool_response",
        actor_kind="agent",
        actor=MARKERS["actor"],
        content=MARKERS["content"],
    )
    with connection.execute_wrapper(spy):
        services.record_actum(MARKERS["owner"], actum)
        services.record_actum(MARKERS["owner"], actum, idempotency_key=MARKERS["key"])
        services.record_actum(MARKERS["owner"], actum, idempotency_key=MARKERS["key"])
        services.get_acta(
            MARKERS["owner"],
            MARKERS["chronicum_id"],
            kinds=["tool_response", "thought"],
            actor_kinds=["agent"],
            last_n=7919,
        )
        services.get_chronicum(MARKERS["owner"], MARKERS["chronicum_id"])
    assert seen
    texts = " ".join(sql for sql, _ in seen)
    params = {str(p) for _, ps in seen for p in flatten(ps)}
    for field, marker in MARKERS.items():
        assert marker not in texts, f"{field} was formatted into SQL"
        # A parameter, or inside one: a batch travels as one JSON array.
        assert any(marker in p for p in params), f"{field} never reached the database"
    for value in ("tool_response", "thought", "7919"):
        assert value not in texts
        assert value in params, params
