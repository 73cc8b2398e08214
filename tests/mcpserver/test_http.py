"""/mcp over Streamable HTTP against a live server: the token, the Origin, the tools as the
token's user."""

from __future__ import annotations

import json
from urllib import request
from urllib.error import HTTPError

import pytest
from mcp import Client

from tests.support.mcp_client import http_calls, token_of, with_http_client

pytestmark = pytest.mark.django_db(transaction=True)

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}


def _post(url: str, message: dict = INIT, **headers: str) -> tuple[int, dict[str, str], bytes]:
    req = request.Request(
        url,
        data=json.dumps(message).encode(),
        method="POST",
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **headers,
        },
    )
    try:
        with request.urlopen(req, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def test_without_a_valid_token_the_answer_is_401_with_www_authenticate(live_server, user):
    for headers in ({}, {"Authorization": "Bearer not-a-token"}):
        status, answer, _ = _post(f"{live_server.url}/mcp", **headers)
        assert status == 401
        assert answer["WWW-Authenticate"].startswith("Bearer")
    status, _, body = _post(f"{live_server.url}/mcp", Authorization=f"Token {token_of(user)}")
    assert status == 200, body


def test_a_foreign_origin_is_refused(live_server, user):
    key = token_of(user)
    status, _, body = _post(
        f"{live_server.url}/mcp", Authorization=f"Bearer {key}", Origin="http://evil.example"
    )
    assert status == 403 and b"Origin" in body
    status, _, _ = _post(
        f"{live_server.url}/mcp", Authorization=f"Bearer {key}", Origin=live_server.url
    )
    assert status == 200


def test_think_then_search_with_a_token_and_users_are_isolated(live_server, user, other_user):
    url, alice, bob = f"{live_server.url}/mcp", token_of(user), token_of(other_user)

    async def think(client: Client):
        made = await client.call_tool(
            "legacymind_think", {"content": "The ferry timetable changes in April"}
        )
        found = await client.call_tool(
            "legacymind_search", {"query": "ferry timetable", "target": "thoughts"}
        )
        return made.structured_content, found.structured_content

    made, found = with_http_client(url, alice, think)
    thought_id = made["delegated_result"]["thought_id"]
    assert [hit["content"] for hit in found["thoughts"]["results"]] == [
        "The ferry timetable changes in April"
    ]

    async def snoop(client: Client):
        found = await client.call_tool(
            "legacymind_search", {"query": "ferry timetable", "target": "thoughts"}
        )
        try:
            await client.read_resource(f"legacymind://thoughts/{thought_id}")
            read = "read"
        except Exception as exc:
            read = str(exc)
        return found.structured_content, read

    found, read = with_http_client(url, bob, snoop)
    assert found["thoughts"]["results"] == []
    assert read != "read" and "ferry" not in read
    assert "Resource not found" in read


def test_a_handshake_era_client_posting_plain_json_rpc_is_served(live_server, user, other_user):
    url = f"{live_server.url}/mcp"
    headers = {"MCP-Protocol-Version": "2025-06-18"}

    def call(key: str, id_: int, method: str, params: dict) -> dict:
        message = {"jsonrpc": "2.0", "id": id_, "method": method, "params": params}
        status, answer, body = _post(url, message, Authorization=f"Bearer {key}", **headers)
        kind = {name.lower(): value for name, value in answer.items()}["content-type"]
        assert status == 200 and kind == "application/json", body
        return json.loads(body)

    alice, bob = token_of(user), token_of(other_user)
    assert call(alice, 1, "initialize", INIT["params"])["result"]["protocolVersion"] == "2025-06-18"
    think = {"name": "legacymind_think", "arguments": {"content": "The tide table is pinned up"}}
    made = call(alice, 2, "tools/call", think)["result"]["structuredContent"]
    search = {
        "name": "legacymind_search",
        "arguments": {"query": "tide table", "target": "thoughts"},
    }
    found = call(alice, 3, "tools/call", search)["result"]
    assert [hit["content"] for hit in found["structuredContent"]["thoughts"]["results"]] == [
        "The tide table is pinned up"
    ]
    assert json.loads(found["content"][0]["text"]) == found["structuredContent"]
    assert (
        call(bob, 4, "tools/call", search)["result"]["structuredContent"]["thoughts"]["results"]
        == []
    )
    uri = f"legacymind://thoughts/{made['delegated_result']['thought_id']}"
    snooped = call(bob, 5, "resources/read", {"uri": uri})
    assert snooped["error"]["code"] == -32602 and "tide" not in json.dumps(snooped)
    (content,) = call(alice, 6, "resources/read", {"uri": uri})["result"]["contents"]
    assert json.loads(content["text"])["thought"]["content"] == "The tide table is pinned up"


def test_staged_writes_wait_for_a_moderator_and_then_are_in_the_graph(live_server, user, moderator):
    url = f"{live_server.url}/mcp"
    entity = {"name": "Ferry Terminal", "entityType": "place", "observations": []}
    (staged, mine) = http_calls(url, user, [
        ("create_entities", {"entities": [entity]}),
        ("open_nodes", {"names": ["Ferry Terminal"]}),
    ])  # fmt: skip
    assert staged["results"][0]["status"] == "pending"
    assert mine["entities"] == [{**entity, "status": "pending"}]

    (queue,) = http_calls(url, moderator, [("memories_moderate", {"action": "review"})])
    candidate = next(c for c in queue["candidates"] if c["name"] == "Ferry Terminal")
    assert candidate["origin"] == f"mcp:{user.pk}"
    decide = {"action": "decide", "items": [
        {"id": candidate["id"], "kind": "entity", "decision": "approve"}
    ]}  # fmt: skip
    (decided,) = http_calls(url, moderator, [("memories_moderate", decide)])
    assert decided["results"][0]["ok"] is True

    (after,) = http_calls(url, user, [("open_nodes", {"names": ["Ferry Terminal"]})])
    assert after["entities"] == [entity]  # in the graph, no longer pending


def test_a_non_moderators_observations_wait_for_a_moderator_marked_pending(
    live_server, user, moderator
):
    from kg.models import Entity

    url = f"{live_server.url}/mcp"
    ledger = Entity.objects.create(name="Ledger", entity_type="service")
    create = {
        "kind": "observation",
        "data": {"name": "ledger size", "description": "2 TB", "entity_id": ledger.pk},
    }
    (added, created, mine) = http_calls(url, user, [
        ("add_observations", {"observations": [{"entityName": "ledger", "contents": ["nightly"]}]}),
        ("memories_create", create),
        ("open_nodes", {"names": ["Ledger"]}),
    ])  # fmt: skip
    assert added["results"] == [
        {"entityName": "ledger", "addedObservations": [], "pendingObservations": ["nightly"],
         "status": "pending"}
    ]  # fmt: skip
    assert (created["status"], created["row"]) == ("pending", None)
    assert mine["entities"] == [
        {"name": "Ledger", "entityType": "service", "observations": [],
         "pendingObservations": ["nightly", "2 TB"]}
    ]  # fmt: skip

    review = {"action": "review", "target": "observation"}
    (queue,) = http_calls(url, moderator, [("memories_moderate", review)])
    assert {c["entity_name"] for c in queue["candidates"]} == {"Ledger"}
    assert {c["origin"] for c in queue["candidates"]} == {f"mcp:{user.pk}"}
    items = [
        {"id": c["id"], "kind": "observation", "decision": "approve"} for c in queue["candidates"]
    ]
    (decided,) = http_calls(url, moderator, [
        ("memories_moderate", {"action": "decide", "items": items})
    ])  # fmt: skip
    assert [r["ok"] for r in decided["results"]] == [True, True]

    (after,) = http_calls(url, user, [("open_nodes", {"names": ["Ledger"]})])
    (entity,) = after["entities"]
    assert "pendingObservations" not in entity  # in the graph, no longer pending
    assert sorted(entity["observations"]) == ["2 TB", "nightly"]


def test_a_user_named_in_mcp_direct_write_users_writes_straight_into_the_graph(
    live_server, user, monkeypatch
):
    from mcpserver import conf

    monkeypatch.setenv("MCP_DIRECT_WRITE_USERS", f"someone,{user.username}")
    conf.direct_write_users.cache_clear()
    try:
        url = f"{live_server.url}/mcp"
        entity = {"name": "Ticket Office", "entityType": "place", "observations": ["opens at 6"]}
        created, added, graph = http_calls(url, user, [
            ("create_entities", {"entities": [entity]}),
            ("add_observations", {"observations": [
                {"entityName": "Ticket Office", "contents": ["closes at 22"]}
            ]}),
            ("read_graph", {"limit": 5}),
        ])  # fmt: skip
    finally:
        conf.direct_write_users.cache_clear()
    assert created["results"][0]["status"] == "created"
    assert added["results"][0]["addedObservations"] == ["closes at 22"]
    assert graph["entities"] == [
        {
            "name": "Ticket Office",
            "entityType": "place",
            "observations": ["opens at 6", "closes at 22"],
        }
    ]
    assert graph["nextCursor"] is None and graph["total"] == 1


def test_the_rest_apis_per_user_throttle_applies(live_server, user, other_user, settings):
    settings.API_THROTTLE_USER = "2/minute"
    url, key = f"{live_server.url}/mcp", token_of(user)
    statuses = [_post(url, Authorization=f"Bearer {key}")[0] for _ in range(3)]
    assert statuses == [200, 200, 429]
    # Per user: another user's calls are counted apart.
    assert _post(url, Authorization=f"Bearer {token_of(other_user)}")[0] == 200


def test_a_moderators_memories_create_writes_each_kind_into_the_graph(live_server, moderator):
    from thoughts.models import Thought

    source = Thought.objects.create(owner=moderator, content="the pier has two cranes")
    url = f"{live_server.url}/mcp"
    entity = {"kind": "entity", "data": {"name": "Pier", "entity_type": "place"},
              "source_thought_id": str(source.id)}  # fmt: skip
    created, again = http_calls(url, moderator, [
        ("memories_create", entity), ("memories_create", entity)
    ])  # fmt: skip
    assert (created["status"], again["status"]) == ("created", "updated")
    assert created["row"]["source_thought_id"] == str(source.id)  # named to its owner
    pier = created["row"]["id"]
    crane, seen = http_calls(url, moderator, [
        ("memories_create", {"kind": "entity", "data": {"name": "Crane", "entity_type": "tool"}}),
        ("memories_create", {"kind": "observation",
                             "data": {"name": "pier cranes", "entity_id": pier}}),
    ])  # fmt: skip
    assert seen["status"] == "created" and seen["row"]["entity_id"] == pier
    relation = {"source_id": pier, "target_id": crane["row"]["id"], "rel_type": "has"}
    (edge,) = http_calls(url, moderator, [
        ("memories_create", {"kind": "relationship", "confidence": 0.8, "data": relation}),
    ])  # fmt: skip
    assert edge["status"] == "created" and edge["row"]["confidence"] == 0.8
    assert edge["row"]["target"]["name"] == "Crane"

    async def bad(client: Client):
        return await client.call_tool(
            "memories_create",
            {"kind": "relationship", "data": {**relation, "target_id": 999999, "rel_typ": "x"}},
        )

    refused = with_http_client(url, token_of(moderator), bad)
    assert refused.is_error
    assert "data.target_id" in refused.content[0].text
    assert "data.rel_typ: Unknown field. Did you mean rel_type?" in refused.content[0].text
