"""``manage.py chronica_agent_credential``: issue, list and revoke an agent's credential."""

from __future__ import annotations

import subprocess
import sys
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from chronica import services
from chronica.services import InvalidCredential

from ..scenario import CHRONICUM, OWNER

pytestmark = pytest.mark.django_db


def run(*args: str) -> tuple[list[str], str]:
    out, err = StringIO(), StringIO()
    call_command("chronica_agent_credential", *args, stdout=out, stderr=err)
    return out.getvalue().splitlines(), err.getvalue()


def test_issue_prints_the_secret_alone_on_the_last_line():
    lines, told = run(
        "issue", "--owner", OWNER, "--actor", "booking", "--chronicum", CHRONICUM,
        "--expires-in", "7d",
    )  # fmt: skip
    secret = lines[-1]
    assert secret.startswith("chr_agent_")
    assert " " not in secret
    identity = services.authenticate_credential(secret)
    assert (identity.actor, identity.chronica) == ("booking", frozenset({CHRONICUM}))
    assert "shown once" in told
    assert secret not in told


def test_list_never_shows_a_secret_and_revoke_ends_it():
    (secret,) = run("issue", "--owner", OWNER, "--actor", "search", "--kind", "system")[0]
    key_id = secret.split("_")[2]
    (line,) = run("list", "--owner", OWNER)[0]
    assert key_id in line
    assert "search" in line
    assert "active" in line
    assert secret.split("_", 3)[3] not in line
    assert run("list", "--owner", "rafa")[0] == []
    with pytest.raises(CommandError):
        run("revoke", key_id, "--owner", "rafa")
    assert run("revoke", key_id)[0] == [f"revoked {key_id}"]
    with pytest.raises(InvalidCredential):
        services.authenticate_credential(secret)
    assert "revoked" in run("list")[0][0]


@pytest.mark.parametrize(
    "args",
    [
        ("--actor", "booking", "--expires-in", "soon"),
        ("--actor", ""),
    ],
)
def test_bad_input_is_a_command_error_and_issues_nothing(args):
    with pytest.raises(CommandError):
        run("issue", "--owner", OWNER, *args)
    assert services.list_credentials() == []


@pytest.mark.django_db(transaction=True)
def test_from_a_shell_the_last_line_is_the_secret(tmp_path):
    import os

    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings"}
    done = subprocess.run(
        [sys.executable, "-m", "django", "chronica_agent_credential", "issue",
         "--owner", OWNER, "--actor", "booking"],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    if done.returncode != 0 and ("no such table" in done.stderr or "does not exist" in done.stderr):
        pytest.skip("the test database is not the one a subprocess opens")
    assert done.returncode == 0, done.stderr
    combined = (done.stderr + done.stdout).strip().splitlines()
    assert combined[-1].startswith("chr_agent_")


def test_owner_user_names_the_owner_by_user_name(django_user_model):
    ardian = django_user_model.objects.create_user("ardian")
    lines, told = run("issue", "--owner-user", "ardian", "--actor", "booking")
    identity = services.authenticate_credential(lines[-1])
    assert identity.owner_id == str(ardian.pk)
    assert "warning" not in told
    with pytest.raises(CommandError, match="no user 'rafa'"):
        run("issue", "--owner-user", "rafa", "--actor", "booking")
    with pytest.raises(CommandError):
        run("issue", "--owner-user", "ardian", "--owner", "1", "--actor", "booking")
    assert len(services.list_credentials()) == 1


def test_an_owner_id_no_user_has_is_issued_with_a_warning_naming_the_user(django_user_model):
    ardian = django_user_model.objects.create_user("ardian")
    lines, told = run("issue", "--owner", "ardian", "--actor", "booking")
    assert lines[-1].startswith("chr_agent_")
    assert "warning: no user has the owner ID 'ardian'" in told
    assert f"the user ardian ({ardian.pk}) is --owner-user ardian" in told
    lines, told = run("issue", "--owner", str(ardian.pk), "--actor", "booking")
    assert "warning" not in told


def test_owners_through_a_custom_owner_id_function(django_user_model, settings):
    settings.CHRONICA = {"OWNER_ID": "tests.commands.test_agent_credential_command.by_name"}
    django_user_model.objects.create_user("ardian")
    lines, _ = run("issue", "--owner-user", "ardian", "--actor", "booking")
    assert services.authenticate_credential(lines[-1]).owner_id == "user-ardian"
    assert "warning" not in run("issue", "--owner", "user-ardian", "--actor", "booking")[1]
    assert "warning" in run("issue", "--owner", "ardian", "--actor", "booking")[1]


def by_name(user) -> str:
    return f"user-{user.get_username()}"
