"""Redis unreachable while the app runs: a think is stored and answered promptly (what was not
queued is one WARNING line each), and throttled endpoints answer a 503 in the envelope.

"Down" is a REDIS_URL to a 127.0.0.1 port where nothing listens: the real Celery app and
redis-py clients, refused at connect."""

from __future__ import annotations

import logging
import time

import pytest

from kg.selectors import nearest as kg_search
from tests.support.celery_worker import celery_against
from tests.support.redis_server import cache_down, free_port
from tests.thoughts.conftest import embedded, text_vector, with_cosine
from tests.thoughts.factories import EntityFactory
from thoughts.models import Thought

TEXT = "Notes about the greenhouse watering rota"


def problems(caplog) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.levelno >= logging.WARNING]


@pytest.mark.django_db(transaction=True)  # on-commit work runs inside the request, as deployed
def test_with_the_broker_down_a_think_is_stored_promptly_and_says_what_was_not_queued(api, caplog):
    kg_search._NONE_SEARCHABLE.clear()
    EntityFactory(name="rota", **embedded(with_cosine(text_vector(TEXT), 0.8, 1)))
    caplog.set_level(logging.INFO)
    with celery_against(f"redis://127.0.0.1:{free_port()}/7"):
        started = time.monotonic()
        r = api.post(
            "/api/v1/think",
            {"content": TEXT, "hint": "question", "injection_scale": 1},
            format="json",
        )
        elapsed = time.monotonic() - started
    assert r.status_code == 201, r.json()
    assert [m["name"] for m in r.json()["injected"]] == ["rota"]  # so a bump was pushed too
    assert Thought.objects.filter(content=TEXT).count() == 1
    assert elapsed < 3, f"the think took {elapsed:.1f} s"
    # One line per thing not queued: the extraction task and the injected memory's bump.
    lines = problems(caplog)
    assert [r.name for r in lines] == ["legacymind.tasks", "legacymind.tasks"], [
        (r.name, r.getMessage()) for r in lines
    ]
    assert all(r.levelno == logging.WARNING and not r.exc_info for r in lines)
    messages = [r.getMessage() for r in lines]
    assert any("not queued after commit: kg.thought_extract" in m for m in messages), messages
    assert any("touch" in m for m in messages), messages
    assert not any(TEXT in m or "greenhouse" in m for m in messages)  # never the payload


@pytest.mark.django_db
def test_with_throttles_on_and_the_cache_down_the_api_answers_503_in_the_envelope(
    api, settings, caplog
):
    settings.API_THROTTLE_USER = "100/minute"
    caplog.set_level(logging.WARNING)
    with cache_down() as port:
        r = api.get("/api/v1/thoughts/")
    assert r.status_code == 503, r.content
    body = r.json()
    assert body["error_code"] == "service_unavailable" and body["fields"] == {}
    assert str(port) not in body["detail"]
    warnings = [m.getMessage() for m in problems(caplog) if m.levelno == logging.WARNING]
    assert any(f"127.0.0.1:{port}" in m for m in warnings), warnings
    assert not [m for m in caplog.records if m.exc_info], "a traceback was logged"
