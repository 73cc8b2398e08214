"""Fixtures of the inner-voice tests: the loopback OpenAI-wire server as Grok, answering the
synthesis, the feedback question and the KG extraction; rows whose vectors have a chosen cosine
to the hash embedding of the question, so retrieval thresholds can be tested exactly."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kg.models import Entity, Observation
from tests.kg.conftest import FAKE_CLI, fake_cli, grok  # noqa: F401  (fixtures)
from tests.thoughts.conftest import embedded, text_vector, with_cosine
from tests.thoughts.factories import EntityFactory, ObservationFactory, ThoughtFactory
from thoughts.models import Thought

MARKER = "ZQXMARKER"
QUERY = f"How does the billing service depend on Postgres {MARKER}?"
SYNTH = "The billing service depends on Postgres for invoices. It keeps ledgers there."
FEEDBACK = "Which invoice path fails first\nwhen Postgres is slow?\nThird line\nFourth line"
EXTRACTION = json.dumps(
    {
        "entities": [
            {"id": "e1", "label": "Billing Service", "type": "service"},
            {"id": "e2", "label": "Postgres", "type": "technology"},
        ],
        "edges": [{"from_id": "e1", "to_id": "e2", "relation": "depends_on"}],
    }
)


def route(messages: list[dict[str, Any]]) -> str:
    """Grok's answer by request: the inner voice's synthesis (its system prompt), the feedback
    question (its instruction), else the extractor's JSON."""
    system = next((m["content"] for m in messages if m["role"] == "system"), "")
    last = messages[-1]["content"]
    if "inner voice" in system:
        return SYNTH
    if "highest-impact next question" in last:
        return FEEDBACK
    return EXTRACTION


@pytest.fixture
def voice(grok):  # noqa: F811
    """CLI failing (the suite's default), Grok answering through the loopback server."""
    grok.chat_fn = route
    return grok


def ask(client: Any, **body: Any) -> Any:
    body.setdefault("query", QUERY)
    return client.post("/api/v1/inner-voice", body, format="json")


def thought_at(owner: Any, cosine: float, seed: int, **fields: Any) -> Thought:
    vector = with_cosine(text_vector(QUERY), cosine, seed)
    fields.setdefault("content", f"Stored thought {seed} about billing.")
    return ThoughtFactory(owner=owner, **fields, **embedded(vector))


def entity_at(cosine: float, seed: int, **fields: Any) -> Entity:
    vector = with_cosine(text_vector(QUERY), cosine, seed)
    return EntityFactory(**fields, **embedded(vector))


def observation_at(cosine: float, seed: int, **fields: Any) -> Observation:
    vector = with_cosine(text_vector(QUERY), cosine, seed)
    return ObservationFactory(**fields, **embedded(vector))
