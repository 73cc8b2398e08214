"""``ensure_superuser`` refuses a weak DJANGO_SUPERUSER_PASSWORD as createsuperuser does (F5),
and a PORT that is not a port is one line naming it, before anything is written (F8)."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

pytestmark = pytest.mark.django_db


@pytest.fixture
def secret(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("DJANGO_SUPERUSER_PASSWORD", "DJANGO_SUPERUSER_EMAIL", "PORT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DJANGO_SUPERUSER_USERNAME", "ops-admin")
    return tmp_path / "superuser.txt"


def run(secret: Path) -> str:
    out = StringIO()
    call_command("ensure_superuser", "--secret-file", str(secret), stdout=out)
    return out.getvalue()


@pytest.mark.parametrize(
    ("password", "reason"),
    [("x", "too short"), ("password123", "too common")],
)
def test_a_weak_password_from_the_environment_is_refused_with_the_validators_reasons(
    secret, monkeypatch, password, reason
):
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", password)

    with pytest.raises(CommandError, match="DJANGO_SUPERUSER_PASSWORD is too weak") as excinfo:
        run(secret)

    assert reason in str(excinfo.value)
    assert not get_user_model().objects.filter(username="ops-admin").exists()


def test_a_weak_password_does_not_replace_an_existing_users_password(secret, monkeypatch):
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", "a-long-pass-phrase")
    run(secret)
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", "abc")

    with pytest.raises(CommandError, match="too weak"):
        run(secret)

    assert get_user_model().objects.get(username="ops-admin").check_password("a-long-pass-phrase")


def test_a_strong_or_generated_password_is_accepted(secret, monkeypatch):
    assert "(generated, kept in" in run(secret)
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", "a-long-pass-phrase")
    assert "(from DJANGO_SUPERUSER_PASSWORD)" in run(secret)


def test_a_port_that_is_not_a_number_is_one_clear_error_before_any_write(secret, monkeypatch):
    monkeypatch.setenv("PORT", "abc")

    with pytest.raises(CommandError, match="PORT must be an integer"):
        run(secret)

    assert not get_user_model().objects.filter(username="ops-admin").exists()
    monkeypatch.setenv("PORT", "70000")
    with pytest.raises(CommandError, match=r"PORT=70000 is outside 1\.\.65535"):
        run(secret)
