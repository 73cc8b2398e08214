"""A handshake-era client's plain request over /mcp goes through ``mcpserver.single`` (the SDK's
single-exchange driver), not the SDK's stateless transport: the two must answer alike, byte for
byte, and what the direct path does not serve must still reach the transport."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcpserver import http
from mcpserver.single import single_request
from thoughts.models import Thought

HEADERS = [
    (b"accept", b"application/json, text/event-stream"),
    (b"content-type", b"application/json"),
    (b"mcp-protocol-version", b"2025-06-18"),
]


def _scope(user: Any, headers: list[tuple[bytes, bytes]] = HEADERS, method: str = "POST"):
    return {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method,
        "scheme": "http", "path": "/mcp", "raw_path": b"/mcp", "root_path": "",
        "query_string": b"", "headers": list(headers), "server": ("127.0.0.1", 8000),
        "client": ("127.0.0.1", 0), "user": user,
    }  # fmt: skip


def _call(id_: int | str, method: str, params: dict[str, Any] | None = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


@pytest.mark.django_db
def test_the_direct_path_answers_as_the_sdks_transport_does(user, other_user):
    think = {"name": "legacymind_think", "arguments": {"content": "the night ferry leaves at ten"}}
    made = json.loads(http.serve(_scope(user), _call(0, "tools/call", think)).content)
    mine = made["result"]["structuredContent"]["delegated_result"]["thought_id"]
    theirs = Thought.objects.create(owner=other_user, content="bob's harbour plan")
    search = {"name": "legacymind_search", "arguments": {"query": "ferry", "target": "thoughts"}}
    bodies = [
        _call(1, "tools/call", search),
        _call("two", "tools/call", {"name": "legacymind_search", "arguments": {"querry": "x"}}),
        _call(3, "tools/call", {"name": "legacymind_serch", "arguments": {}}),
        _call(4, "tools/call", {"arguments": {}}),  # no tool name: the SDK's INVALID_PARAMS
        _call(5, "no/such/method"),
        _call(6, "resources/read", {"uri": f"legacymind://thoughts/{mine}"}),
        _call(7, "resources/read", {"uri": f"legacymind://thoughts/{theirs.id}"}),
        _call(8, "tools/list"),
        _call(9, "ping"),
    ]
    # Without a version header the client is a 2025-03-26 one, on both paths.
    for headers in (HEADERS, HEADERS[:2]):
        for body in bodies:
            assert single_request(_scope(user, headers), body) is not None
            direct = http.serve(_scope(user, headers), body)
            through = http.serve(_scope(user, headers), body, direct=False)
            assert (direct.status_code, direct["Content-Type"]) == (200, "application/json")
            assert through.status_code == 200
            assert direct.content == through.content, body

    found = json.loads(http.serve(_scope(user), bodies[0]).content)["result"]
    assert [hit["content"] for hit in found["structuredContent"]["thoughts"]["results"]] == [
        "the night ferry leaves at ten"
    ]
    assert json.loads(found["content"][0]["text"]) == found["structuredContent"]
    typo = json.loads(http.serve(_scope(user), bodies[1]).content)["result"]
    assert (
        typo["isError"]
        and "querry: Unknown field. Did you mean query?" in typo["content"][0]["text"]
    )
    foreign = json.loads(http.serve(_scope(user), bodies[6]).content)["error"]
    assert foreign["code"] == -32602 and foreign["message"].startswith("Resource not found")
    assert "harbour" not in json.dumps(foreign)


@pytest.mark.django_db
def test_what_the_direct_path_does_not_serve_goes_to_the_transport(user):
    initialize = json.dumps({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "test", "version": "1"}},
    }).encode()  # fmt: skip
    notification = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
    ping = _call(1, "ping")
    modern = [*HEADERS[:2], (b"mcp-protocol-version", b"2026-07-28")]
    no_json = [(b"accept", b"text/event-stream"), *HEADERS[1:]]
    form = [HEADERS[0], (b"content-type", b"text/plain"), HEADERS[2]]
    for scope, body in [
        (_scope(user), initialize),
        (_scope(user), notification),
        (_scope(user), b"[" + ping + b"]"),  # a batch
        (_scope(user), b"{not json"),
        (_scope(user, method="GET"), b""),
        (_scope(user, modern), ping),
        (_scope(user, no_json), ping),
        (_scope(user, form), ping),
    ]:
        assert single_request(scope, body) is None, (scope["headers"], body)

    started = http.serve(_scope(user), initialize)
    assert started.status_code == 200
    assert json.loads(started.content)["result"]["protocolVersion"] == "2025-06-18"
    assert http.serve(_scope(user), notification).status_code == 202
    assert http.serve(_scope(user, no_json), ping).status_code == 406
    assert http.serve(_scope(user, form), ping).status_code == 400  # the SDK's Content-Type check
