"""Cognitive frameworks through POST /api/v1/think: off unless THINK_ENHANCE, only on
conversational modes, deterministic, weighted by the submode profile."""

from __future__ import annotations

import pytest

from thoughts.models import Thought

pytestmark = pytest.mark.django_db

URL = "/api/v1/think"
TEXT = "The nightly export fails because the disk fills up. Should I add more space?"
SEVEN = {
    "ooda", "socratic", "first_principles", "lateral", "root_cause", "systems", "dialectical",
}  # fmt: skip


@pytest.fixture
def enhance(settings):
    settings.THINK_ENHANCE = True


def think(api, **payload):
    r = api.post(URL, {"content": TEXT, "injection_scale": 0, **payload}, format="json")
    assert r.status_code == 201, r.json()
    return r.json()


def test_frameworks_are_off_by_default(api):
    body = think(api, hint="question")
    thought = Thought.objects.get()
    assert thought.framework_enhanced is False and thought.framework_analysis is None
    assert body["telemetry"]["framework_enhanced"] is False
    assert "framework_analysis" not in body["delegated_result"]


@pytest.mark.parametrize("hint", ["question", "conclude"])
def test_conversational_modes_are_enhanced_when_enabled(api, enhance, hint):
    body = think(api, hint=hint)
    thought = Thought.objects.get()
    assert thought.framework_enhanced is True
    analysis = thought.framework_analysis
    assert body["delegated_result"]["framework_analysis"] == analysis
    assert body["telemetry"]["framework_enhanced"] is True
    assert analysis["submode"] == "problem_solving"
    assert analysis["weights"] == {"ooda": 0.4, "root_cause": 0.3, "first_principles": 0.3}
    for key in ("insights", "questions", "next_steps"):
        assert 1 <= len(analysis[key]) <= 5


@pytest.mark.parametrize("hint", ["debug", "build", "plan", "stuck"])
def test_technical_modes_are_never_enhanced(api, enhance, hint):
    body = think(api, hint=hint)
    assert Thought.objects.get().framework_analysis is None
    assert body["telemetry"]["framework_enhanced"] is False


@pytest.mark.parametrize(
    ("submode", "weights"),
    [
        ("sarcastic", {"ooda": 0.6, "socratic": 0.3, "lateral": 0.1}),
        ("philosophical", {"first_principles": 0.4, "socratic": 0.4, "lateral": 0.2}),
        ("empathetic", {"root_cause": 0.5, "socratic": 0.3, "first_principles": 0.2}),
        ("problem_solving", {"ooda": 0.4, "root_cause": 0.3, "first_principles": 0.3}),
    ],
)
def test_submode_profiles_choose_frameworks_and_weights(api, enhance, submode, weights):
    body = think(api, hint="question", submode=submode)
    analysis = body["delegated_result"]["framework_analysis"]
    assert analysis["submode"] == submode
    assert analysis["weights"] == weights
    assert set(analysis["frameworks"]) == set(weights)
    assert Thought.objects.get().submode == submode


def test_analysis_is_deterministic_from_the_content(api, enhance):
    first = think(api, hint="question", submode="sarcastic")["delegated_result"]
    second = think(api, hint="question", submode="sarcastic")["delegated_result"]
    assert first["framework_analysis"] == second["framework_analysis"]
    other = api.post(
        URL,
        {"content": "Why do I procrastinate on taxes?", "hint": "question", "submode": "sarcastic"},
        format="json",
    ).json()["delegated_result"]
    assert other["framework_analysis"] != first["framework_analysis"]


def test_systems_and_dialectical_join_when_the_text_calls_for_them(api, enhance):
    text = (
        "Sleep depends on stress and stress affects sleep. "
        "I want to rest, but the deadline says otherwise."
    )
    r = api.post(URL, {"content": text, "hint": "question", "injection_scale": 0}, format="json")
    analysis = r.json()["delegated_result"]["framework_analysis"]
    assert set(analysis["added"]) == {"systems", "dialectical"}
    assert sum(analysis["weights"].values()) == pytest.approx(1.0, abs=1e-3)
    systems = analysis["frameworks"]["systems"]
    assert systems["meta"]["relations"] == 2
    assert systems["meta"]["loops"] == ["sleep", "stress"]
    dialectical = analysis["frameworks"]["dialectical"]
    assert dialectical["meta"]["tension"] is True
    assert dialectical["insights"][1].startswith("Antithesis: the deadline says otherwise")


def test_all_seven_frameworks_return_insights_questions_next_steps_and_meta(api, enhance):
    text = (
        "The cache fails under load because eviction depends on memory pressure. "
        "Everyone says add more nodes, but cost matters. What should I change first?"
    )
    seen = {}
    for submode in ("sarcastic", "philosophical", "empathetic", "problem_solving"):
        r = api.post(
            URL,
            {"content": text, "hint": "question", "submode": submode, "injection_scale": 0},
            format="json",
        )
        seen.update(r.json()["delegated_result"]["framework_analysis"]["frameworks"])
    assert set(seen) == SEVEN
    for name, result in seen.items():
        assert result["insights"] and result["questions"] and result["next_steps"], name
        assert isinstance(result["meta"], dict), name
    assert seen["root_cause"]["insights"][0].startswith("Symptom: The cache fails under load")
    assert seen["root_cause"]["meta"]["stated_causes"] == 1
    assert seen["ooda"]["meta"]["phase"] == "decide"
    assert "everyone" in seen["first_principles"]["meta"]["inherited"]
