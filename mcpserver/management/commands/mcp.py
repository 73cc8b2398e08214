"""``manage.py mcp --user NAME``: the MCP server over stdio, the command an MCP client
spawns. stdout carries the protocol only; logs go to stderr."""

from __future__ import annotations

import os
from typing import Any

import anyio
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError
from mcp.server.stdio import stdio_server

from mcpserver.server import Caller, build, in_thread

USER_VARIABLE = "LEGACYMIND_MCP_USER"


def mcp_user(name: str | None) -> User:
    """The user every call runs as: ``--user``, else ``LEGACYMIND_MCP_USER``."""
    name = (name or os.environ.get("LEGACYMIND_MCP_USER", "")).strip()
    if not name:
        raise CommandError(f"No user: pass --user NAME or set {USER_VARIABLE}.")
    try:
        user = User.objects.filter(username=name, is_active=True).first()
    except DatabaseError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CommandError(f"The database is not ready ({first}): run make setup first.") from None
    if user is None:
        raise CommandError(
            f"No active user {name!r}: create one first (manage.py createsuperuser)."
        )
    return user


class Command(BaseCommand):
    help = "Serve LegacyMind's MCP tools over stdio as one user (for an MCP client to spawn)."
    requires_system_checks: list[str] = []  # checks print to stdout, which is the protocol's

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", help=f"username the calls run as (or {USER_VARIABLE})")

    def handle(self, *args: Any, **options: Any) -> None:
        user = mcp_user(options.get("user"))
        server = build(Caller(user=user, run=in_thread))

        async def serve() -> None:
            async with stdio_server() as (read_stream, write_stream):
                await server.run(read_stream, write_stream, server.create_initialization_options())

        anyio.run(serve)
