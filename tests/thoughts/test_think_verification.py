"""Hypothesis verification through POST /api/v1/think, with KG vectors at chosen cosines to the
hypothesis' hash embedding (default min_similarity 0.60)."""

from __future__ import annotations

import sys

import pytest

from tests.support.texts import of_its_own
from tests.thoughts.factories import ThoughtFactory
from thoughts.models import Thought

pytestmark = pytest.mark.django_db

URL = "/api/v1/think"
HYPOTHESIS = "Stack traces point to symptoms, not root causes"


@pytest.fixture(autouse=True)
def _hypothesis_of_its_own(request, monkeypatch):
    """Each test verifies a hypothesis of its own (``of_its_own``: earlier tests' dead rows)."""
    monkeypatch.setattr(
        sys.modules[__name__], "HYPOTHESIS", of_its_own(HYPOTHESIS, request.node.name)
    )


def verify(api, **payload):
    body = {
        "content": "How should I read a stack trace?",
        "hint": "question",
        "injection_scale": 0,
        "hypothesis": HYPOTHESIS,
        "needs_verification": True,
        **payload,
    }
    r = api.post(URL, body, format="json")
    assert r.status_code == 201, r.json()
    return r.json()


def evidence_names(items):
    return [item["name"] for item in items]


def test_evidence_splits_into_supporting_and_contradicting(api, memory):
    memory(about=HYPOTHESIS, cosine=0.90, name="Symptoms surface first")
    memory(about=HYPOTHESIS, cosine=0.85, name="Traces show where it broke")
    memory(
        about=HYPOTHESIS,
        cosine=0.80,
        kind="observation",
        name="Crash log",
        description="top frame was a symptom",
    )
    memory(about=HYPOTHESIS, cosine=0.75, name="Root cause is not in the trace")
    memory(
        about=HYPOTHESIS, cosine=0.70, kind="observation", name="Claim", description="this is false"
    )
    memory(about=HYPOTHESIS, cosine=0.40, name="Unrelated and not relevant")
    v = verify(api)["verification"]
    assert v["hypothesis"] == HYPOTHESIS
    assert evidence_names(v["supporting"]) == [
        "Symptoms surface first",
        "Traces show where it broke",
        "Crash log",
    ]
    assert evidence_names(v["contradicting"]) == ["Root cause is not in the trace", "Claim"]
    assert [i["matched_pattern"] for i in v["contradicting"]] == ["not", "false"]
    assert v["confidence_score"] == pytest.approx(0.6)
    assert v["suggested_revision"] is None
    tel = v["telemetry"]
    assert (tel["matched_support"], tel["matched_contradict"]) == (3, 2)
    assert tel["candidates_after_similarity"] == 5
    assert (tel["provider"], tel["embedding_dim"]) == ("hash", 384)
    assert tel["time_ms"] >= 0


def test_evidence_of_another_model_of_the_same_dimension_is_never_cited(api, memory):
    old = {"embedding_provider": "local", "embedding_model": "all-MiniLM-L6-v2"}
    memory(about=HYPOTHESIS, cosine=0.95, name="old model evidence", **old)
    memory(about=HYPOTHESIS, cosine=0.8, name="current evidence")
    result = verify(api)["verification"]
    cited = evidence_names(result["supporting"]) + evidence_names(result["contradicting"])
    assert cited == ["current evidence"]


def test_low_confidence_suggests_a_revision(api, memory):
    memory(about=HYPOTHESIS, cosine=0.9, name="Agrees")
    memory(about=HYPOTHESIS, cosine=0.8, name="Traces cannot mislead")
    memory(about=HYPOTHESIS, cosine=0.7, name="It isn't so")
    v = verify(api)["verification"]
    assert v["confidence_score"] == pytest.approx(1 / 3, abs=1e-4)
    assert v["suggested_revision"] == "Consider revising hypothesis based on 2 contradicting items"


def test_no_evidence_is_neutral(api, memory):
    memory(about=HYPOTHESIS, cosine=0.2, name="Far away")
    v = verify(api)["verification"]
    assert (v["supporting"], v["contradicting"]) == ([], [])
    assert v["confidence_score"] == 0.5
    assert v["suggested_revision"] is None


def test_patterns_match_whole_words_only(api, memory):
    memory(about=HYPOTHESIS, cosine=0.9, name="Engineers know traces well")  # "no" in "know"
    memory(about=HYPOTHESIS, cosine=0.8, name="Nothing notable")  # "not" in "notable"
    v = verify(api)["verification"]
    assert len(v["supporting"]) == 2 and v["contradicting"] == []


def test_custom_contradiction_patterns_replace_the_defaults(api, memory):
    memory(about=HYPOTHESIS, cosine=0.9, name="This is not wrong")
    memory(about=HYPOTHESIS, cosine=0.8, name="Hypothesis disproved by logs")
    v = verify(api, contradiction_patterns=["Disproved"])["verification"]
    assert evidence_names(v["supporting"]) == ["This is not wrong"]
    assert evidence_names(v["contradicting"]) == ["Hypothesis disproved by logs"]
    assert v["telemetry"]["patterns"] == ["disproved"]


def test_default_patterns_come_from_settings(api, memory, settings):
    settings.THINK_VERIFY_PATTERNS = ["refuted"]
    memory(about=HYPOTHESIS, cosine=0.9, name="Refuted in review")
    memory(about=HYPOTHESIS, cosine=0.8, name="This is not wrong")
    v = verify(api)["verification"]
    assert evidence_names(v["contradicting"]) == ["Refuted in review"]


def test_each_list_is_capped_at_evidence_limit_most_similar_first(api, memory):
    for i in range(5):
        memory(about=HYPOTHESIS, cosine=0.9 - i * 0.05, name=f"support {i}")
    for i in range(3):
        memory(about=HYPOTHESIS, cosine=0.88 - i * 0.05, name=f"broken {i}")
    v = verify(api, evidence_limit=2)["verification"]
    assert evidence_names(v["supporting"]) == ["support 0", "support 1"]
    assert evidence_names(v["contradicting"]) == ["broken 0", "broken 1"]
    # The score counts every match, not just the ones shown.
    assert v["confidence_score"] == pytest.approx(5 / 8)
    assert (v["telemetry"]["matched_support"], v["telemetry"]["matched_contradict"]) == (5, 3)


def test_min_similarity_is_the_evidence_threshold(api, memory):
    memory(about=HYPOTHESIS, cosine=0.5, name="Loosely related")
    assert verify(api)["verification"]["supporting"] == []
    v = verify(api, min_similarity=0.45)["verification"]
    assert evidence_names(v["supporting"]) == ["Loosely related"]


def test_verify_top_k_bounds_the_candidates(api, memory):
    for i in range(4):
        memory(about=HYPOTHESIS, cosine=0.9 - i * 0.05, name=f"e{i}")
    v = verify(api, verify_top_k=2)["verification"]
    assert evidence_names(v["supporting"]) == ["e0", "e1"]


def test_verification_is_stored_on_the_thought_by_default(api, memory):
    memory(about=HYPOTHESIS, cosine=0.9, name="Agrees")
    body = verify(api)
    assert Thought.objects.get().verification == body["verification"]


def test_verification_is_not_stored_when_persistence_is_off(api, memory, settings):
    settings.THINK_PERSIST_VERIFICATION = False
    memory(about=HYPOTHESIS, cosine=0.9, name="Agrees")
    body = verify(api)
    assert body["verification"]["confidence_score"] == 1.0
    assert Thought.objects.get().verification is None


@pytest.mark.parametrize(
    "payload",
    [{"needs_verification": False}, {"hypothesis": None}, {"hypothesis": "  "}],
)
def test_no_verification_without_both_flag_and_hypothesis(api, memory, payload):
    memory(about=HYPOTHESIS, cosine=0.9, name="Agrees")
    assert verify(api, **payload)["verification"] is None
    assert Thought.objects.get().verification is None


def test_other_users_private_memories_are_never_cited(api, other_user, memory):
    private = ThoughtFactory(owner=other_user, is_private=True)
    memory(about=HYPOTHESIS, cosine=0.9, name="Bob's secret", source_thought=private)
    memory(about=HYPOTHESIS, cosine=0.8, name="Public fact")
    v = verify(api)["verification"]
    assert evidence_names(v["supporting"]) == ["Public fact"]
