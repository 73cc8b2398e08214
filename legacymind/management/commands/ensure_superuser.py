"""Create (or keep) the admin superuser and print how to log in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured, ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from legacymind.conf.env import env, env_int
from legacymind.superuser import superuser_ensure


class Command(BaseCommand):
    help = (
        "Create the superuser from DJANGO_SUPERUSER_USERNAME/_PASSWORD/_EMAIL (default admin, "
        "a generated password kept in var/superuser.txt), add it to the KG moderators group and "
        "print the login with an API token."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--secret-file",
            type=Path,
            default=Path(settings.BASE_DIR) / "var" / "superuser.txt",
            help="where a generated password is kept (default var/superuser.txt, mode 0600)",
        )
        parser.add_argument(
            "--url",
            help=(
                "admin URL to print (default http://127.0.0.1:$PORT/admin/, PORT 8000; "
                "`make run PORT=...` exports it, so the URL matches the server it starts)"
            ),
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        username = env.str("DJANGO_SUPERUSER_USERNAME", default="admin").strip()
        if not username:
            raise CommandError("DJANGO_SUPERUSER_USERNAME must not be empty")
        # Read before anything is written: `make run PORT=abc` stops here with one line,
        # before it would start a server on a port that cannot exist.
        try:
            url = (
                opts["url"] or f"http://127.0.0.1:{env_int('PORT', 8000, low=1, high=65535)}/admin/"
            )
        except ImproperlyConfigured as exc:
            raise CommandError(f"{exc} (the port of the admin URL printed; or pass --url)") from exc
        try:
            login = superuser_ensure(
                username=username,
                email=env.str("DJANGO_SUPERUSER_EMAIL", default="admin@example.com"),
                password=env.str("DJANGO_SUPERUSER_PASSWORD", default="") or None,
                secret_path=opts["secret_file"],
            )
        except OSError as exc:
            raise CommandError(f"cannot store the generated password: {exc}") from exc
        except ValidationError as exc:
            raise CommandError(
                "DJANGO_SUPERUSER_PASSWORD is too weak: " + " ".join(exc.messages)
            ) from exc
        if login.password is None:
            password = "(unchanged; set DJANGO_SUPERUSER_PASSWORD to reset it)"
        else:
            password = login.password
        where = {
            "generated": f" (generated, kept in {opts['secret_file']})",
            "file": f" (from {opts['secret_file']})",
            "environment": " (from DJANGO_SUPERUSER_PASSWORD)",
        }.get(login.password_source, "")
        self.stdout.write(
            "\n".join(
                [
                    "LegacyMind admin login" + (" (new superuser)" if login.created else ""),
                    f"  URL:       {url}",
                    f"  username:  {login.username}",
                    f"  password:  {password}{where}",
                    f"  API token: {login.token}   (header  Authorization: Token {login.token})",
                ]
            )
        )
