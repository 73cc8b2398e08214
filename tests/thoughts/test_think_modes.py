"""Mode selection in three tiers, and the per-mode defaults, through POST /api/v1/think."""

from __future__ import annotations

import pytest

from thoughts.models import Thought

pytestmark = pytest.mark.django_db

URL = "/api/v1/think"


def think(api, **payload):
    r = api.post(URL, {"injection_scale": 0, **payload}, format="json")
    assert r.status_code == 201, r.json()
    return r.json()


def test_hint_overrides_trigger_phrases_and_keywords(api):
    body = think(api, content="debug time: error, bug, exception", hint="plan")
    assert body["mode_selected"] == "plan"
    assert body["reason"] == "hint specified"
    assert body["telemetry"]["trigger_matched"] is None
    assert body["telemetry"]["heuristics"] is None


def test_unknown_hint_falls_back_to_heuristics_and_says_so(api):
    body = think(api, content="The build failed with an exception and a bug", hint="banana")
    assert body["mode_selected"] == "debug"
    assert body["reason"] == "heuristic keyword match"
    assert body["telemetry"]["hint_ignored"] == "banana"


@pytest.mark.parametrize(
    ("content", "mode", "phrase"),
    [
        ("OK, debug time. The login form.", "debug", "debug time"),
        ("Building time for the exporter", "build", "building time"),
        ("plan time: next quarter", "plan", "plan time"),
        ("Planning time again", "plan", "planning time"),
        ("I'm stuck on the proof", "stuck", "i'm stuck"),
        ("Still stuck here", "stuck", "stuck"),
        ("Question time: why is the sky blue", "question", "question time"),
        ("Let's wrap up the week", "conclude", "wrap up"),
        ("To conclude, it went well", "conclude", "conclude"),
    ],
)
def test_trigger_phrases_select_their_mode(api, content, mode, phrase):
    body = think(api, content=content)
    assert body["mode_selected"] == mode
    assert body["reason"] == f"trigger phrase '{phrase}'"
    assert body["telemetry"]["trigger_matched"] == phrase
    assert body["telemetry"]["heuristics"] is None


def test_trigger_phrase_wins_over_keywords(api):
    body = think(api, content="Architecture design strategy approach. Wrap up please.")
    assert body["mode_selected"] == "conclude"


@pytest.mark.parametrize(
    ("content", "mode", "keywords"),
    [
        ("The job failed with an exception", "debug", ["failed", "exception"]),
        ("Implement the exporter and scaffold the CLI", "build", ["implement", "scaffold"]),
        ("Which architecture and approach fit?", "plan", ["architecture", "approach"]),
        ("I am confused and unsure", "stuck", ["unsure", "confused"]),
    ],
)
def test_keyword_scores_pick_the_best_mode(api, content, mode, keywords):
    body = think(api, content=content)
    assert body["mode_selected"] == mode
    assert body["reason"] == "heuristic keyword match"
    assert body["telemetry"]["heuristics"] == {"keywords": keywords, "score": len(keywords)}


def test_the_highest_score_wins(api):
    # debug: error (1); plan: design, strategy (2)
    body = think(api, content="An error in the design strategy")
    assert body["mode_selected"] == "plan"
    assert body["telemetry"]["heuristics"]["score"] == 2


def test_a_keyword_tie_selects_question(api):
    body = think(api, content="An exception in the architecture")
    assert body["mode_selected"] == "question"
    assert body["reason"] == "keyword tie between debug, plan; default"
    assert body["telemetry"]["heuristics"]["score"] == 1
    assert body["telemetry"]["heuristics"]["tied"] == ["debug", "plan"]


def test_no_keyword_selects_question(api):
    body = think(api, content="A walk by the river at dusk")
    assert body["mode_selected"] == "question"
    assert body["telemetry"]["heuristics"] == {"keywords": [], "score": 0}


@pytest.mark.parametrize(
    ("hint", "scale", "significance", "origin"),
    [
        ("debug", 3, 0.8, "tool"),
        ("build", 2, 0.6, "tool"),
        ("plan", 3, 0.7, "tool"),
        ("stuck", 3, 0.9, "tool"),
        ("question", 2, 0.5, "human"),
        ("conclude", 2, 0.5, "human"),
    ],
)
def test_mode_defaults_for_scale_significance_and_origin(api, hint, scale, significance, origin):
    r = api.post(URL, {"content": "Some thinking", "hint": hint}, format="json")
    assert r.status_code == 201
    thought = Thought.objects.get()
    assert (thought.injection_scale, thought.significance, thought.origin) == (
        scale,
        significance,
        origin,
    )
    assert thought.mode == hint


@pytest.mark.parametrize("hint", ["debug", "question"])
def test_given_scale_and_significance_override_the_mode_defaults(api, hint):
    r = api.post(
        URL,
        {"content": "Some thinking", "hint": hint, "injection_scale": 1, "significance": 0.1},
        format="json",
    )
    assert r.status_code == 201
    thought = Thought.objects.get()
    assert (thought.injection_scale, thought.significance) == (1, 0.1)
