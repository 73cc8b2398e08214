"""``?limit=&offset=`` on every paged list: bad values are a 400 naming them, not a default."""

from __future__ import annotations

import pytest

from tests.kg.factories import EntityFactory

pytestmark = pytest.mark.django_db
URL = "/api/v1/kg/entities/"


@pytest.mark.parametrize(
    "query, field",
    [
        ("limit=0", "limit"),
        ("limit=-5", "limit"),
        ("limit=ten", "limit"),
        ("offset=-1", "offset"),
        ("offset=null", "offset"),
        ("offset=44538348486186622976", "offset"),  # past bigint: was a 500 on candidates
        ("offset=1000000001", "offset"),
    ],
)
def test_bad_limit_or_offset_is_a_400_naming_it(api, query, field):
    response = api.get(f"{URL}?{query}")
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["error_code"] == "invalid" and field in body["fields"]


def test_limit_and_offset_page_through_in_order(api):
    for name in ("a", "b", "c", "d", "e"):
        EntityFactory(name=name)
    first = api.get(f"{URL}?limit=2").json()
    assert first["count"] == 5 and [e["name"] for e in first["results"]] == ["a", "b"]
    assert "offset=2" in first["next"]
    last = api.get(f"{URL}?limit=2&offset=4").json()
    assert [e["name"] for e in last["results"]] == ["e"] and last["next"] is None
    assert api.get(f"{URL}?offset=1000000000").json()["results"] == []


def test_limit_above_the_cap_gives_the_cap(api):
    EntityFactory.create_batch(205)
    body = api.get(f"{URL}?limit=5000").json()
    assert body["count"] == 205 and len(body["results"]) == 200
    assert len(api.get(URL).json()["results"]) == 50  # the default
