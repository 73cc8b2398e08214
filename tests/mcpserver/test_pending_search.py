"""``search_nodes`` finds a writer's own pending observations by their text, marked pending,
and never another user's: over Streamable HTTP against a live server."""

from __future__ import annotations

import pytest
from mcp import Client
from rest_framework.authtoken.models import Token

from tests.mcpserver.conftest import with_http_client

pytestmark = pytest.mark.django_db(transaction=True)


def _key(user) -> str:
    return Token.objects.get_or_create(user=user)[0].key


def _calls(url: str, user, calls: list[tuple[str, dict]]) -> list[dict]:
    async def session(client: Client):
        out = []
        for name, args in calls:
            result = await client.call_tool(name, args)
            assert not result.is_error, result.content[0].text
            out.append(result.structured_content)
        return out

    return with_http_client(url, _key(user), session)


def _search(query: str) -> tuple[str, dict]:
    return ("search_nodes", {"query": query})


def _stage(observe: list[str], entity: dict) -> list[tuple[str, dict]]:
    return [
        ("add_observations", {"observations": [{"entityName": "Ledger", "contents": observe}]}),
        ("create_entities", {"entities": [entity]}),
    ]


def test_search_nodes_finds_the_writers_own_pending_observations_by_their_text(
    live_server, user, other_user
):
    from kg.models import Entity, ObservationCandidate

    url = f"{live_server.url}/mcp"
    # In the graph with no vector: only a pending observation's text can bring it to a search.
    Entity.objects.create(name="Ledger", entity_type="service")
    billing = {"name": "Billing", "entityType": "service",
               "observations": ["settles the quokka invoices"]}  # fmt: skip
    payroll = {"name": "Payroll", "entityType": "service", "observations": ["quokka wages"]}
    staged = _calls(url, user, _stage(["rotates the zebrafish archive nightly"], billing))
    staged += _calls(
        url, other_user, _stage(["hides the narwhal backup", "feeds a quokka"], payroll)
    )
    assert {r["status"] for s in staged for r in s["results"]} == {"pending"}
    assert ObservationCandidate.objects.filter(status="pending").count() == 5

    on_ledger, on_billing, of_bob = _calls(url, user, [
        _search("zebrafish archive"), _search("quokka"), _search("narwhal backup"),
    ])  # fmt: skip
    # On an entity in the graph, and on her own entity still pending, marked pending; Bob's
    # pending observations on the same entity and the same word are not hers to see.
    assert on_ledger == {"entities": [
        {"name": "Ledger", "entityType": "service", "observations": [],
         "pendingObservations": ["rotates the zebrafish archive nightly"]}
    ], "relations": []}  # fmt: skip
    assert on_billing == {"entities": [
        {"name": "Billing", "entityType": "service", "observations": [], "status": "pending",
         "pendingObservations": ["settles the quokka invoices"]}
    ], "relations": []}  # fmt: skip
    # Nor are they found by their text.
    assert of_bob == {"entities": [], "relations": []}

    bobs, alices = _calls(url, other_user, [_search("narwhal"), _search("zebrafish")])
    assert bobs["entities"] == [
        {"name": "Ledger", "entityType": "service", "observations": [],
         "pendingObservations": ["hides the narwhal backup", "feeds a quokka"]}
    ]  # fmt: skip
    assert alices["entities"] == []


def test_an_approved_observation_is_no_longer_pending_in_search_nodes(live_server, user, moderator):
    from kg.models import Entity

    url = f"{live_server.url}/mcp"
    Entity.objects.create(name="Ledger", entity_type="service")
    _calls(url, user, [("add_observations", {"observations": [
        {"entityName": "Ledger", "contents": ["keeps a zebrafish ledger"]}
    ]})])  # fmt: skip
    (queue,) = _calls(url, moderator, [
        ("memories_moderate", {"action": "review", "target": "observation"})
    ])  # fmt: skip
    items = [{"id": c["id"], "kind": "observation", "decision": "approve"}
             for c in queue["candidates"]]  # fmt: skip
    _calls(url, moderator, [("memories_moderate", {"action": "decide", "items": items})])

    (found,) = _calls(url, user, [_search("zebrafish")])
    assert found["entities"] == [
        {"name": "Ledger", "entityType": "service", "observations": ["keeps a zebrafish ledger"]}
    ]
