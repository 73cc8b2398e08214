"""bench/crux.py --diagnose (bench/_crux_diagnose.py) puts each play in the class of where its
accuracy was lost: no first-turn hypothesis passes the judge, the writer's picks, or the final
wording."""

from __future__ import annotations

import importlib
from typing import Any

import pytest


@pytest.fixture
def diagnose() -> Any:
    return importlib.import_module("bench._crux_diagnose")


def _oracle(seed_ok: dict[str, bool], other: bool = False, frame_span: bool = False) -> dict:
    return {"seed_ok": seed_ok, "other_ok": other, "frame_span_ok": frame_span, "gold": {}}


def _ask(targets: list[str], ok: list[bool], pick: int) -> dict:
    return {"targets": targets, "ok": ok, "pick": pick, "texts": [f"crux {t}" for t in targets]}


def test_a_right_crux_is_right_whatever_the_seeds(diagnose: Any) -> None:
    play = {"asks": [], "final": "x", "top": "burnout", "final_ok": True}
    assert diagnose.classify(_oracle({"burnout": False}), play) == "right"


def test_no_passing_seed_says_what_else_would_have_passed(diagnose: Any) -> None:
    play = {"asks": [], "final": "x", "top": "burnout", "final_ok": False}
    assert diagnose.classify(_oracle({"burnout": False}, other=True), play).startswith("A1")
    assert diagnose.classify(_oracle({"burnout": False}, frame_span=True), play).startswith("A2")
    assert diagnose.classify(_oracle({"burnout": False}), play).startswith("A3")


def test_a_passing_seed_is_traced_through_the_writers_answers(diagnose: Any) -> None:
    seeds = _oracle({"burnout": False, "grief_loss": True, "loneliness": False})
    never_shown = {
        "asks": [_ask(["burnout", "loneliness"], [False, False], 0)],
        "final": "crux burnout",
        "top": "burnout",
        "final_ok": False,
    }
    assert diagnose.classify(seeds, never_shown).startswith("B1")
    passed_over = {**never_shown, "asks": [_ask(["burnout", "grief_loss"], [False, True], 0)]}
    assert diagnose.classify(seeds, passed_over) == "B2 shown; writer picked another"
    unsure = {**never_shown, "asks": [_ask(["burnout", "grief_loss"], [False, True], 2)]}
    assert diagnose.classify(seeds, unsure) == "B2 shown; writer said not sure throughout"
    picked = [_ask(["burnout", "grief_loss"], [False, True], 1)]
    overruled = {**never_shown, "asks": picked}
    assert diagnose.classify(seeds, overruled).startswith("B3")
    reworded = {**never_shown, "asks": picked, "top": "grief_loss", "final": "other words"}
    assert diagnose.classify(seeds, reworded).startswith("C")
