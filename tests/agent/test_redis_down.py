"""With the Redis cache unreachable, the journaling endpoints answer a 503 in the envelope.

The cache holds the agent's rate guard and its idempotency store: without it a turn cannot be
counted or replayed safely, so the request is refused (retryable), never run unguarded, and
never a 500. The client is not told where Redis is; the log says."""

from __future__ import annotations

import logging

import pytest

from tests.agent.conftest import BOUNDARIES_ENTRY, act, advance, init
from tests.support.redis_server import cache_down as redis_cache_down

pytestmark = pytest.mark.django_db


@pytest.fixture
def cache_down(caplog):
    """The Redis cache REDIS_URL configures, at a port where nothing listens (restored before
    the agent's cache fixture clears the database cache)."""
    caplog.set_level(logging.WARNING)
    with redis_cache_down() as port:
        yield port


def unavailable(response, port: int, caplog) -> None:
    assert response.status_code == 503, response.content
    body = response.json()
    assert body["error_code"] == "service_unavailable"
    assert body["fields"] == {}
    assert str(port) not in body["detail"] and "redis" not in body["detail"].lower()
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(f"127.0.0.1:{port}" in m for m in warnings), warnings
    assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"


@pytest.mark.parametrize(
    "body",
    [{"mode": "init", "journal_entry": {"text": BOUNDARIES_ENTRY}}, {"mode": "bogus"}],
    ids=["valid", "invalid"],
)
def test_agent_act_is_a_503_when_the_rate_guard_cannot_reach_redis(
    client, cache_down, caplog, body
):
    unavailable(act(client, body), cache_down, caplog)


def test_reflections_is_a_503_when_the_rate_guard_cannot_reach_redis(client, cache_down, caplog):
    response = client.post(
        "/reflections", {"journal_entry": {"text": BOUNDARIES_ENTRY}}, format="json"
    )
    unavailable(response, cache_down, caplog)


def test_a_replayable_turn_is_refused_not_run_without_the_idempotency_store(
    client, settings, cache_down, caplog
):
    settings.AGENT_RATE_PER_MINUTE = 0  # no rate guard: the first cache use is the store's
    data = init(client)
    response = advance(client, data, HTTP_IDEMPOTENCY_KEY="turn-1")
    unavailable(response, cache_down, caplog)


def test_the_journal_page_keeps_the_entry_and_says_to_retry_when_redis_is_down(
    client, cache_down, caplog
):
    response = client.post("/journal/act", {"entry": BOUNDARIES_ENTRY})
    assert response.status_code == 503
    page = response.content.decode()
    assert "unavailable" in page and "try again" in page
    assert str(cache_down) not in page and "redis" not in page.lower()
    assert "like I always say yes" in page  # the entry is still in the form
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(f"127.0.0.1:{cache_down}" in m for m in warnings), warnings
    assert BOUNDARIES_ENTRY[:40] not in " ".join(warnings)  # never the writer's words
    assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"
