"""The client configuration the README and docs/mcp.md give works when pasted: each JSON block,
with the clone's path, a user and a token filled in, is what the SDK's client starts or reaches,
from another directory and with no more environment than a desktop client has."""

from __future__ import annotations

import asyncio
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.support.mcp_client import ROOT, server_env, token_of, with_client

pytestmark = pytest.mark.django_db(transaction=True)

PLACEHOLDER = "/path/to/legacymind"
# What this test needs besides the block, and a user's machine has by default: the test
# database instead of var/pgdata, and the offline embedder instead of the local model.
TEST_ONLY = ("DATABASE_URL", "EMBEDDING_PROVIDER", "EMBEDDING_DIM", "IV_CLI_CMD",
             "DISTRESS_MODEL_CHECK")  # fmt: skip


def _blocks(path: Path) -> list[dict[str, Any]]:
    """The ``legacymind`` server of every mcpServers JSON block in ``path``."""
    text = path.read_text()
    found = re.findall(r"```json\n(.*?)```", text, re.S)
    return [json.loads(b)["mcpServers"]["legacymind"] for b in found if "mcpServers" in b]


def _filled(value: Any, **fill: str) -> Any:
    if isinstance(value, dict):
        return {key: _filled(item, **fill) for key, item in value.items()}
    if isinstance(value, list):
        return [_filled(item, **fill) for item in value]
    if isinstance(value, str):
        for placeholder, real in fill.items():
            value = value.replace(placeholder, real)
    return value


def _stdio_blocks() -> list[tuple[str, dict[str, Any]]]:
    return [
        (doc, block)
        for doc in ("README.md", "docs/mcp.md")
        for block in _blocks(ROOT / doc)
        if "command" in block
    ]


@pytest.mark.parametrize(("doc", "block"), _stdio_blocks(), ids=lambda v: str(v)[:12])
def test_a_pasted_stdio_block_starts_the_server(doc, block, user, tmp_path):
    server = _filled(block, **{PLACEHOLDER: str(ROOT), "alice": user.username})
    test_env = {name: server_env()[name] for name in TEST_ONLY}
    desktop = {name: os.environ[name] for name in ("PATH", "HOME") if name in os.environ}
    params = StdioServerParameters(
        command=server["command"],
        args=server["args"],
        env={**desktop, **test_env, **server.get("env", {})},
        cwd=server.get("cwd", str(tmp_path)),  # a client starts it wherever it runs
    )

    async def session(client: Client):
        listed = {tool.name for tool in (await client.list_tools()).tools}
        found = await client.call_tool("legacymind_search", {"query": "harbour"})
        return listed, found

    listed, found = with_client(params, session)
    assert "legacymind_search" in listed, doc
    assert not found.is_error, (doc, found.content[0].text)


def test_the_http_block_reaches_the_live_server(live_server, user):
    (block,) = [b for b in _blocks(ROOT / "docs/mcp.md") if "url" in b]
    assert block["url"] == "http://127.0.0.1:8000/mcp"  # what make run serves
    server = _filled(block, **{"http://127.0.0.1:8000": live_server.url, "<token>": token_of(user)})

    async def session():
        async with create_mcp_http_client(headers=server["headers"]) as http:
            transport = streamable_http_client(server["url"], http_client=http)
            async with Client(transport, read_timeout_seconds=60) as client:
                return await client.call_tool("legacymind_search", {"query": "harbour"})

    found = asyncio.run(session())
    assert not found.is_error, found.content[0].text
