"""Date-time bounds with any offset Python reads (up to ±23:59) filter by the same instant.

Postgres refuses offsets beyond ±15:59 ("time zone displacement out of range"): such a bound
reached the query as it was and failed there, a 500 on the list and on search.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tests.thoughts.factories_read import ThoughtFactory, near

pytestmark = pytest.mark.django_db
LIST = "/api/v1/thoughts/"
SEARCH = "/api/v1/search"
Q = "night shift notes"


def listed(api, **params) -> set[str]:
    resp = api.get(LIST, params)
    assert resp.status_code == 200, resp.content[:500]
    return {row["id"] for row in resp.json()["results"]}


@pytest.fixture
def around_19_utc(user):
    """Two thoughts a minute either side of 2026-11-24T19:00Z, which is 00:00 at -19:00."""
    before = ThoughtFactory(owner=user, created_at=datetime(2026, 11, 24, 18, 59, tzinfo=UTC))
    after = ThoughtFactory(owner=user, created_at=datetime(2026, 11, 24, 19, 1, tzinfo=UTC))
    return str(before.pk), str(after.pk)


def test_a_date_from_beyond_postgres_offsets_filters_by_the_same_instant(api, around_19_utc):
    before, after = around_19_utc
    assert listed(api, date_from="2026-11-24T00:00:00-19:00") == {after}
    assert listed(api, date_to="2026-11-24T00:00:00-19:00") == {before}
    # +23:59, the largest offset Python reads: 2026-11-25T00:00+23:59 is 2026-11-24T00:01Z.
    assert listed(api, date_from="2026-11-25T00:00:00+23:59") == {before, after}


def test_search_takes_the_same_offsets(api, user):
    inside = ThoughtFactory(
        owner=user, created_at=datetime(2026, 11, 24, 23, 0, tzinfo=UTC), **near(Q, 0.9)
    )
    ThoughtFactory(owner=user, created_at=datetime(2026, 11, 24, 22, 0, tzinfo=UTC), **near(Q, 0.9))
    body = {
        "query": Q,
        "include_thoughts": True,
        "date_from": "2026-11-24T00:00:00-22:52",  # 22:52Z
        "date_to": "2026-11-24T08:30:00-16:00",  # 2026-11-25T00:30Z
    }
    resp = api.post(SEARCH, body, format="json")
    assert resp.status_code == 200, resp.content[:500]
    # 22:00Z is before 22:52Z; only the thought at 23:00Z is inside.
    assert [row["id"] for row in resp.json()["thoughts"]["results"]] == [str(inside.pk)]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("date_from", "0001-01-01T00:00:00+05:00"),  # before year 1 once in UTC
        ("date_to", "9999-12-31T23:59:59-05:00"),  # after year 9999 once in UTC
    ],
)
def test_a_bound_outside_the_calendar_once_in_utc_is_a_400_naming_it(api, field, value):
    resp = api.get(LIST, {field: value})
    assert resp.status_code == 400, resp.content[:500]
    body = resp.json()
    assert body["error_code"] == "invalid"
    assert set(body["fields"]) == {field}
    resp = api.post(SEARCH, {"query": Q, "include_thoughts": True, field: value}, format="json")
    assert resp.status_code == 400, resp.content[:500]
    assert set(resp.json()["fields"]) == {field}
