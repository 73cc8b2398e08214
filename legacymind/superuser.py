"""The admin login ``make run`` prints: ``superuser_ensure`` creates or keeps the superuser, puts
it in the moderators group and gives it an API token. Idempotent: a second run changes nothing,
and a password someone changed since is left as it is.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractUser, User
from django.contrib.auth.password_validation import validate_password
from django.db import transaction
from django.dispatch import Signal
from rest_framework.authtoken.models import Token

# Sent with ``user`` once the operator's superuser is saved, inside its transaction.
superuser_ensured = Signal()


@dataclass(frozen=True)
class SuperuserLogin:
    username: str
    password: str | None  # None: an existing password we do not know, left unchanged
    token: str
    created: bool
    password_source: str  # "environment", "file", "generated", "unchanged"


def _read_secret(path: Path, username: str) -> str | None:
    try:
        lines = path.read_text().splitlines()
    except FileNotFoundError:
        return None
    values = dict(line.split("=", 1) for line in lines if "=" in line)
    return values.get("password") if values.get("username") == username else None


def _write_secret(path: Path, username: str, password: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    # Created 0600 from the start: the password is never readable by others, not even briefly.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(f"username={username}\npassword={password}\n")
    os.chmod(path, 0o600)


def superuser_ensure(
    *, username: str, email: str, password: str | None, secret_path: Path
) -> SuperuserLogin:
    """Create the superuser (or keep it), put it in the moderators group, and give it a token.

    ``password`` (from the environment) is applied when given, after AUTH_PASSWORD_VALIDATORS
    accept it (``ValidationError`` otherwise, nothing written). Without it a password is
    generated once and kept in ``secret_path``; an existing user whose password we do not know
    keeps it.
    """
    if not username:
        raise ValueError("the superuser needs a username")
    user_model = get_user_model()
    with transaction.atomic():
        user = user_model.objects.select_for_update().filter(username=username).first()
        created = user is None
        if user is None:
            user = user_model(username=username, email=email)
        assert isinstance(user, AbstractUser)
        password, source = _password_for(
            user, password, username=username, created=created, secret_path=secret_path
        )
        changed: list[str] = []
        if password and (created or not user.check_password(password)):
            if source == "file" and not created:
                # Someone changed the password since we stored it: theirs wins.
                password, source = None, "unchanged"
            else:
                user.set_password(password)
                changed.append("password")
        changed += _superuser_flags(user, email)
        if created:
            user.save()
        elif changed:
            user.save(update_fields=changed)
        # Each app grants what its own roles need (the KG: moderation).
        superuser_ensured.send(sender=SuperuserLogin, user=user)
        token, _ = Token.objects.get_or_create(user=user)
    return SuperuserLogin(
        username=username,
        password=password,
        token=token.key,
        created=created,
        password_source=source,
    )


def _password_for(
    user: User, password: str | None, *, username: str, created: bool, secret_path: Path
) -> tuple[str | None, str]:
    """The password to apply and where it comes from: the environment's (once the validators
    accept it), the one kept in ``secret_path``, or a new one for a new user (kept there);
    else none ("unchanged")."""
    if password:
        # As createsuperuser does: the admin login is the last one to leave weak.
        validate_password(password, user)
        return password, "environment"
    stored = _read_secret(secret_path, username)
    if stored is not None:
        return stored, "file"
    if created:
        generated = secrets.token_urlsafe(15)
        _write_secret(secret_path, username, generated)
        return generated, "generated"
    return None, "unchanged"


def _superuser_flags(user: User, email: str) -> list[str]:
    """Make ``user`` an active superuser with an email; returns the fields it changed."""
    changed: list[str] = []
    for flag in ("is_staff", "is_superuser", "is_active"):
        if not getattr(user, flag):
            setattr(user, flag, True)
            changed.append(flag)
    if email and not user.email:
        user.email = email
        changed.append("email")
    return changed
