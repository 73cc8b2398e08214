"""``search_nodes`` finds a writer's own pending observations by their text, marked pending,
and never another user's: over Streamable HTTP against a live server, and over stdio with
``manage.py mcp --user`` spawned by the SDK's client."""

from __future__ import annotations

import pytest

from tests.support.mcp_client import http_calls, stdio_calls, stdio_params

pytestmark = pytest.mark.django_db(transaction=True)


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
    staged = http_calls(url, user, _stage(["rotates the zebrafish archive nightly"], billing))
    staged += http_calls(
        url, other_user, _stage(["hides the narwhal backup", "feeds a quokka"], payroll)
    )
    assert {r["status"] for s in staged for r in s["results"]} == {"pending"}
    assert ObservationCandidate.objects.filter(status="pending").count() == 5

    on_ledger, on_billing, of_bob = http_calls(url, user, [
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

    bobs, alices = http_calls(url, other_user, [_search("narwhal"), _search("zebrafish")])
    assert bobs["entities"] == [
        {"name": "Ledger", "entityType": "service", "observations": [],
         "pendingObservations": ["hides the narwhal backup", "feeds a quokka"]}
    ]  # fmt: skip
    assert alices["entities"] == []


def test_an_approved_observation_is_no_longer_pending_in_search_nodes(live_server, user, moderator):
    from kg.models import Entity

    url = f"{live_server.url}/mcp"
    Entity.objects.create(name="Ledger", entity_type="service")
    http_calls(url, user, [("add_observations", {"observations": [
        {"entityName": "Ledger", "contents": ["keeps a zebrafish ledger"]}
    ]})])  # fmt: skip
    (queue,) = http_calls(url, moderator, [
        ("memories_moderate", {"action": "review", "target": "observation"})
    ])  # fmt: skip
    items = [{"id": c["id"], "kind": "observation", "decision": "approve"}
             for c in queue["candidates"]]  # fmt: skip
    http_calls(url, moderator, [("memories_moderate", {"action": "decide", "items": items})])

    (found,) = http_calls(url, user, [_search("zebrafish")])
    assert found["entities"] == [
        {"name": "Ledger", "entityType": "service", "observations": ["keeps a zebrafish ledger"]}
    ]


def test_over_stdio_search_nodes_finds_the_users_own_pending_observations_only(user, other_user):
    from kg.models import Entity, ObservationCandidate

    Entity.objects.create(name="Ledger", entity_type="service")
    billing = {"name": "Billing", "entityType": "service",
               "observations": ["settles the quokka invoices"]}  # fmt: skip
    payroll = {"name": "Payroll", "entityType": "service", "observations": ["quokka wages"]}
    (bob_staged, _) = stdio_calls(
        stdio_params(other_user), _stage(["hides the narwhal backup"], payroll)
    )
    staged_obs, staged_entity, on_ledger, on_billing, of_bob = stdio_calls(
        stdio_params(user),
        [
            *_stage(["rotates the zebrafish archive nightly"], billing),
            _search("zebrafish archive"),
            _search("quokka"),
            _search("narwhal backup"),
        ],
    )
    assert {r["status"] for r in (*bob_staged["results"], *staged_obs["results"])} == {"pending"}
    assert staged_entity["results"][0]["status"] == "pending"
    assert ObservationCandidate.objects.filter(status="pending").count() == 4
    assert on_ledger == {"entities": [
        {"name": "Ledger", "entityType": "service", "observations": [],
         "pendingObservations": ["rotates the zebrafish archive nightly"]}
    ], "relations": []}  # fmt: skip
    # Her own pending entity by its observation's word; Bob's entity with the same word is not.
    assert on_billing == {"entities": [
        {"name": "Billing", "entityType": "service", "observations": [], "status": "pending",
         "pendingObservations": ["settles the quokka invoices"]}
    ], "relations": []}  # fmt: skip
    assert of_bob == {"entities": [], "relations": []}
