"""Floors for the offline extractor on the realistic prose sets, just under the figures reached
when the last round of rules was finished. All seven sets A-G are tuned on now (A+B from the
start, C-G after their held-out figures were reported); the fresh held-out set H is measured by
``bench/kg_extract.py`` only, never here. Each group keeps its own floor, so a rule that helps one
group but costs another shows up as a broken floor. The leave-names-out floor scores each set with
its own gold names withheld from the built-in lists: the proxy for prose whose names no list
knows, which the rules were tuned against."""

from __future__ import annotations

from pathlib import Path

import pytest

from kg.extraction.heuristic import HeuristicExtractor
from kg.extraction.scoring import Score, load_items, score_prose
from kg.extraction.withheld import names_withheld

PROSE = Path(__file__).parent / "fixtures" / "prose"
SETS = ("A", "B", "C", "D", "E", "F", "G")


@pytest.mark.parametrize(
    ("files", "floors"),
    [
        # Reached: entity P 0.957 F1 0.915, edge P 0.824 F1 0.671, types 0.944.
        (("set_A.jsonl", "set_B.jsonl"), (0.94, 0.90, 0.80, 0.65, 0.93)),
        # Reached: entity P 0.833 F1 0.811, edge P 0.659 F1 0.448, types 0.857.
        (("set_C.jsonl", "set_D.jsonl"), (0.82, 0.79, 0.63, 0.42, 0.84)),
        # Reached: entity P 0.893 F1 0.882, edge P 0.676 F1 0.558, types 0.886.
        (("set_E.jsonl",), (0.88, 0.87, 0.65, 0.54, 0.86)),
        # Reached: entity P 0.902 F1 0.865, edge P 0.826 F1 0.632, types 0.771.
        (("set_F.jsonl",), (0.89, 0.84, 0.80, 0.61, 0.75)),
        # Reached: entity P 0.826 F1 0.789, edge P 0.578 F1 0.391, types 0.786.
        (("set_G.jsonl",), (0.81, 0.77, 0.55, 0.37, 0.76)),
    ],
    ids=["A+B", "C+D", "E", "F", "G"],
)
def test_prose_sets_stay_above_their_floors(files, floors):
    items = [item for name in files for item in load_items(PROSE / name)]
    got = score_prose(items, HeuristicExtractor().extract)
    ent_p, ent_f1, edge_p, edge_f1, type_acc = floors
    assert got.entities.precision >= ent_p
    assert got.entities.f1 >= ent_f1
    assert got.edges.precision >= edge_p
    assert got.edges.f1 >= edge_f1
    assert got.type_accuracy >= type_acc
    assert got.fragment_rate <= 0.01


def test_with_its_own_names_withheld_each_set_stays_above_the_proxy_floor():
    # Reached on A-G together: entity P 0.863, edge P 0.692, edge F1 0.478.
    extract = HeuristicExtractor().extract
    entities, edges = Score(), Score()
    for letter in SETS:
        items = load_items(PROSE / f"set_{letter}.jsonl")
        with names_withheld(items):
            got = score_prose(items, extract)
        for mine, theirs in ((entities, got.entities), (edges, got.edges)):
            mine.tp, mine.fp, mine.fn = (
                mine.tp + theirs.tp,
                mine.fp + theirs.fp,
                mine.fn + theirs.fn,
            )
    assert entities.precision >= 0.85
    assert edges.precision >= 0.67
    assert edges.f1 >= 0.46


def test_withholding_names_is_undone_afterwards():
    items = load_items(PROSE / "set_A.jsonl")
    extract = HeuristicExtractor().extract
    before = [extract(item["text"]) for item in items[:10]]
    with names_withheld(items):
        during = [extract(item["text"]) for item in items[:10]]
    after = [extract(item["text"]) for item in items[:10]]
    assert after == before
    assert during != before  # the lists did change while withheld


def test_every_fresh_passage_has_the_guidelines_shape():
    # Set E keeps the format of A-D: evidence copied from the passage, ends among its entities.
    for item in load_items(PROSE / "set_E.jsonl"):
        names = {e["name"] for e in item["entities"]}
        for edge in item["edges"]:
            assert edge["evidence"] in item["text"]
            assert {edge["source"], edge["target"]} <= names


def test_every_edge_on_the_tuned_sets_carries_a_sentence_of_its_passage():
    extract = HeuristicExtractor().extract
    for letter in SETS:
        for item in load_items(PROSE / f"set_{letter}.jsonl"):
            for edge in extract(item["text"]).edges:
                assert edge.evidence, (item["id"], edge.source, edge.target)
                assert edge.evidence in item["text"], (item["id"], edge.evidence)
