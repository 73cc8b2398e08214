"""AGENT_EVIDENCE_REQUESTS: with "after_answer" the policy requests no context evidence
(EvidenceRequest, spec 004) before the writer has answered a question; with "off" never. The
reason and the train figures are in docs/benchmarks.md (crux section)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.agent.conftest import BOUNDARIES_ENTRY, advance, init

pytestmark = pytest.mark.django_db

ENTRIES = (
    BOUNDARIES_ENTRY,
    "Third double shift this week at the depot. I'm so tired I forgot my own PIN at the till "
    "on Friday. Weekends are just sleeping and laundry now, and the rota for next month is "
    "worse. I want to rest but I have to pay the rent.",
)


def _kinds(client: Any, text: str) -> list[str]:
    data = init(client, text)
    for _ in range(12):
        if data["complete"]:
            break
        response = advance(client, data)
        assert response.status_code == 200, response.content
        data = response.json()
    assert data["complete"]
    return [e["kind"] for e in data["state"]["evidence_log"]]


@pytest.mark.parametrize("text", ENTRIES)
def test_after_answer_requests_no_context_before_the_first_answer(client, settings, text):
    settings.AGENT_RATE_PER_MINUTE = 0
    settings.AGENT_EVIDENCE_REQUESTS = "after_answer"
    kinds = _kinds(client, text)
    assert "UserAnswer" in kinds, kinds
    assert "ContextDatum" not in kinds[: kinds.index("UserAnswer")], kinds


@pytest.mark.parametrize("text", ENTRIES)
def test_off_requests_no_context_at_all(client, settings, text):
    settings.AGENT_RATE_PER_MINUTE = 0
    settings.AGENT_EVIDENCE_REQUESTS = "off"
    kinds = _kinds(client, text)
    assert "ContextDatum" not in kinds, kinds
