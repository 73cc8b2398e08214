"""An ask while the task broker (Redis) is down: the answer is stored and given, and it says
the synthesis' KG extraction was not queued (it said "queued", while the log said the
opposite)."""

from __future__ import annotations

import logging

import pytest

from innervoice.models import DialogueExchange
from tests.innervoice.conftest import ask
from tests.support.celery_worker import celery_against
from tests.support.redis_server import free_port


@pytest.mark.django_db(transaction=True)  # on-commit work runs inside the request, as deployed
def test_with_the_broker_down_an_ask_says_its_extraction_was_not_queued(api, voice, caplog):
    caplog.set_level(logging.WARNING)
    with celery_against(f"redis://127.0.0.1:{free_port()}/7"):
        response = ask(api)
    assert response.status_code == 201, response.content
    assert response.json()["extracted"] == {
        "status": "not_queued",
        "entities": None,
        "relationships": None,
    }
    assert DialogueExchange.objects.count() == 1
    assert any(
        "not queued after commit: kg.thought_extract" in r.getMessage() for r in caplog.records
    )


@pytest.mark.django_db(transaction=True)
def test_with_the_broker_up_in_eager_mode_an_ask_stages_its_extraction(api, voice):
    body = ask(api).json()
    assert body["extracted"]["status"] == "staged"
