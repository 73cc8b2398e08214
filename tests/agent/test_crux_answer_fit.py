"""bench/crux.py --fit-answers (bench/_crux_answers.py) scores candidate answer-model settings
with the engine's own answer model: its log-likelihood of a writer's answers is what
``answer_table`` gives the writer's archetype, each answer conditioned on the earlier ones
through their persona likelihoods (agent/engine/answers.py)."""

from __future__ import annotations

import importlib
import math
from typing import Any

import pytest
from django.conf import settings

from agent.engine.answers import CATALOGUE, answer_table, persona_likelihoods
from agent.engine.archetypes import ARCHETYPES


@pytest.fixture
def crux_bench() -> Any:
    return importlib.import_module("bench._crux_answers")


def test_fit_likelihood_is_the_engines_answer_table(crux_bench: Any) -> None:
    gold = 3
    questions = [([0, gold], 1), ([2, 4, 5], 3), ([gold, 6], 0)]
    play = [("w01", gold, questions)]
    shipped = [getattr(settings, k) for k in crux_bench.ANSWER_SETTINGS]

    expected: list[float] = []
    history: list[list[float]] = []
    for targets, answer in questions:
        options = [ARCHETYPES[t].option for t in targets]
        row = answer_table({"h": CATALOGUE[gold]}, options, history=history)["h"]
        expected.append(math.log(row[answer]))
        history.append(persona_likelihoods(options, answer))

    got = crux_bench.answer_log_likelihoods(play, shipped)
    assert got == pytest.approx(expected, rel=1e-4)


def test_plays_are_cut_at_a_target_that_is_not_an_archetype(crux_bench: Any) -> None:
    row = {
        "policy": "FACD (EIG - λ·cost)",
        "archetype": "grief_loss",
        "item_id": "w02-grief_loss-01",
        "asked": [
            [["grief_loss", "burnout"], 0],
            [["grief_loss", ""], 1],
            [["burnout", "loneliness"], 2],
        ],
    }
    ((writer, gold, questions),) = crux_bench._answer_plays([row])
    keys = [a.key for a in ARCHETYPES]
    assert (writer, gold) == ("w02", keys.index("grief_loss"))
    assert questions == [([keys.index("grief_loss"), keys.index("burnout")], 0)]
