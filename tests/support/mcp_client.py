"""The MCP SDK's own client against our server, for tests: ``manage.py mcp`` spawned over stdio
on the test database, or Streamable HTTP to a live server with a user's token; a session run
from a synchronous test, and a list of tool calls whose structured results it returns."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

from django.contrib.auth.models import User
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from rest_framework.authtoken.models import Token

from tests.support.celery_worker import worker_database_url

ROOT = Path(__file__).resolve().parents[2]
T = TypeVar("T")


def server_env(**extra: str) -> dict[str, str]:
    """The environment of a server process on the test database, offline."""
    env = {
        **os.environ,
        "DATABASE_URL": worker_database_url(),
        "EMBEDDING_PROVIDER": "hash",
        "EMBEDDING_DIM": "0",
        "DJANGO_SECRET_KEY": "test-only-secret",
        "AGENT_STATE_SECRET": "test-only-agent-secret",
        "IV_CLI_CMD": "/bin/false",
        "DISTRESS_MODEL_CHECK": "off",
        **extra,
    }
    for name in ("IV_SYNTH_CLI_CMD", "IV_SCRIPT_PATH", "GROK_API_KEY", "IV_MODELS", "REDIS_URL"):
        env.pop(name, None)
    return env


def stdio_params(user: User | None, **env: str) -> StdioServerParameters:
    args = ["manage.py", "mcp"] + (["--user", user.username] if user is not None else [])
    return StdioServerParameters(
        command=sys.executable, args=args, cwd=str(ROOT), env=server_env(**env)
    )


def with_client(
    server: StdioServerParameters | Any, session: Callable[[Client], Awaitable[T]]
) -> T:
    """Run ``session`` against a connected client and return what it returns. Call it outside
    any ORM work: Django refuses queries while an event loop runs in the thread."""

    async def main() -> T:
        async with Client(server, read_timeout_seconds=60) as client:
            return await session(client)

    return asyncio.run(main())


@asynccontextmanager
async def http_client(url: str, token: str | None) -> AsyncIterator[Client]:
    """The SDK's client over Streamable HTTP to ``url`` with ``Authorization: Bearer <token>``;
    its HTTP connections close with it (the server's threads then end, and their database
    connections with them)."""
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    async with create_mcp_http_client(headers=headers) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, read_timeout_seconds=60) as client:
            yield client


def with_http_client(url: str, token: str | None, session: Callable[[Client], Awaitable[T]]) -> T:
    """``with_client`` over HTTP."""

    async def main() -> T:
        async with http_client(url, token) as client:
            return await session(client)

    return asyncio.run(main())


Calls = list[tuple[str, dict[str, Any]]]


async def structured_results(client: Client, calls: Calls) -> list[Any]:
    """Each call's ``structuredContent``, in order; a tool error fails the test with its text."""
    out = []
    for name, arguments in calls:
        result = await client.call_tool(name, arguments)
        assert not result.is_error, f"{name}: {result.content[0].text}"
        out.append(result.structured_content)
    return out


def token_of(user: User) -> str:
    """The user's API token (made on first use): what /mcp takes as the bearer."""
    return Token.objects.get_or_create(user=user)[0].key


def http_calls(url: str, user: User, calls: Calls) -> list[Any]:
    """``calls`` in one HTTP session as ``user``; their structured results."""
    return with_http_client(url, token_of(user), lambda client: structured_results(client, calls))


def stdio_calls(server: StdioServerParameters, calls: Calls) -> list[Any]:
    """``calls`` in one stdio session of ``server``; their structured results."""
    return with_client(server, lambda client: structured_results(client, calls))
