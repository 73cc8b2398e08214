"""The reference memory server's JSONL file loses writes under concurrent writers; here 16
concurrent calls lose and duplicate nothing."""

from __future__ import annotations

import asyncio

import pytest
from rest_framework.authtoken.models import Token

from kg.models import Entity, EntityCandidate, Observation
from tests.support.mcp_client import http_client

pytestmark = pytest.mark.django_db(transaction=True)
CALLS = 16


def test_sixteen_concurrent_writers_lose_and_duplicate_nothing(live_server, moderator):
    url = f"{live_server.url}/mcp"
    key = Token.objects.get_or_create(user=moderator)[0].key

    async def one(i: int):
        async with http_client(url, key) as client:
            created = await client.call_tool(
                "create_entities",
                {"entities": [{"name": "Harbour", "entityType": "place",
                               "observations": [f"pier {i} is open"]}]},
            )  # fmt: skip
            added = await client.call_tool(
                "add_observations",
                {"observations": [{"entityName": "Harbour",
                                   "contents": [f"crane {i} works", "tides are strong"]}]},
            )  # fmt: skip
            return created, added

    async def run():
        return await asyncio.gather(*(one(i) for i in range(CALLS)))

    results = asyncio.run(run())
    for created, added in results:
        assert not created.is_error, created.content[0].text
        assert not added.is_error, added.content[0].text
    assert Entity.objects.filter(name="Harbour").count() == 1
    harbour = Entity.objects.get(name="Harbour")
    texts = sorted(Observation.objects.filter(entity=harbour).values_list("description", flat=True))
    expected = sorted(
        [f"pier {i} is open" for i in range(CALLS)]
        + [f"crane {i} works" for i in range(CALLS)]
        + ["tides are strong"]
    )
    assert texts == expected
    statuses = [r.structured_content["results"][0]["status"] for r, _ in results]
    assert statuses.count("created") == 1 and statuses.count("exists") == CALLS - 1


def test_concurrent_staging_by_a_non_moderator_stages_each_name_once(live_server, user):
    url = f"{live_server.url}/mcp"
    key = Token.objects.get_or_create(user=user)[0].key

    async def one(i: int):
        async with http_client(url, key) as client:
            return await client.call_tool(
                "create_entities",
                {"entities": [{"name": "Lighthouse", "entityType": "place"},
                              {"name": f"Keeper {i}", "entityType": "person"}]},
            )  # fmt: skip

    async def run():
        return await asyncio.gather(*(one(i) for i in range(CALLS)))

    for result in asyncio.run(run()):
        assert [r["status"] for r in result.structured_content["results"]] == ["pending"] * 2
    assert EntityCandidate.objects.filter(name="Lighthouse").count() == 1
    assert EntityCandidate.objects.filter(name__startswith="Keeper ").count() == CALLS
    assert Entity.objects.count() == 0
