"""The offline extractor's learned scorer (``kg.extraction.learned``): it keeps the one-line sets
above their floor, every edge it stages carries a sentence of its passage, its fitting is
deterministic and its thresholds keep the precision asked of them. Its quality on the prose sets
is measured leave-one-set-out by ``bench/kg_extract.py --loso``, not here: the shipped weights
were trained on every set."""

from __future__ import annotations

from pathlib import Path

from kg.extraction.learned import LearnedExtractor, Linear, shipped_scorer
from kg.extraction.phrases import sentence_spans, strip_sources
from kg.extraction.scoring import load_items, score
from kg.extraction.training import TRAIN_SETS, _cuts, fit, threshold

FIXTURES = Path(__file__).parent / "fixtures"


def test_the_one_line_sets_stay_above_the_regression_floor():
    extract = LearnedExtractor().extract
    for name in ("kg_extract_dev.jsonl", "kg_extract_heldout.jsonl"):
        entities, edges = score(load_items(FIXTURES / name), extract)
        assert entities.f1 >= 0.95, name
        assert edges.f1 >= 0.95, name


def test_every_edge_carries_a_sentence_of_its_passage():
    extract = LearnedExtractor().extract
    for name in TRAIN_SETS[::3]:
        for item in load_items(FIXTURES / "prose" / name):
            text = strip_sources(item["text"])
            sentences = {text[a:b] for a, b in sentence_spans(text)}
            for edge in extract(item["text"]).edges:
                assert edge.evidence in sentences or edge.evidence in text, (item["id"], edge)


def test_an_edge_and_its_ends_are_staged_together():
    got = LearnedExtractor().extract(
        "# quillpad\n\nquillpad is a note-taking app written in Kotlin. It keeps notes in "
        "SQLite and syncs them with Nextcloud."
    )
    names = {e.name.lower() for e in got.entities}
    assert got.edges
    for edge in got.edges:
        assert {edge.source.lower(), edge.target.lower()} <= names
        assert edge.evidence


def test_nothing_to_read_gives_nothing():
    got = LearnedExtractor().extract("")
    assert got.empty


def test_fitting_is_deterministic():
    rows = [["bias", "a"], ["bias", "b"], ["bias", "a", "c"], ["bias", "b", "c"]] * 5
    labels = [1, 0, 1, 0] * 5
    first, second = fit(rows, labels), fit(rows, labels)
    assert first == second
    assert first["a"] > 0 > first["b"]


def test_a_threshold_keeps_the_precision_asked_for():
    probs = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4]
    labels = [1, 1, 0, 1, 0, 0]
    cut = threshold(probs, labels, 0.75, total=3)
    kept = [y for p, y in zip(probs, labels, strict=True) if p >= cut]
    assert sum(kept) / len(kept) >= 0.75
    assert cut == 0.6  # three of four right: the most found at that precision


def test_the_rules_edges_are_kept_and_added_edges_clear_a_precision_floor():
    probs = [0.95, 0.9, 0.3, 0.85, 0.2, 0.1]
    labels = [1, 1, 0, 0, 1, 0]
    proposed = [False, False, False, False, True, True]
    model = _cuts({}, probs, labels, proposed, 0.6, total=4, veto=False)
    assert model.rule_threshold == 0.0
    assert 0.3 < model.threshold <= 0.9


def test_the_shipped_scorer_loads_with_both_models():
    scorer = shipped_scorer()
    assert isinstance(scorer.entities, Linear) and isinstance(scorer.edges, Linear)
    assert scorer.entities.weights and scorer.edges.weights
    assert 0.0 < scorer.edges.threshold < 1.0


def test_an_edge_goes_when_the_scorer_refuses_one_of_its_ends():
    from kg.extraction.candidates import read_passage
    from kg.extraction.features import pair_candidates
    from kg.extraction.heuristic import HeuristicExtractor
    from kg.extraction.learned import Scorer, decide

    text = (
        "# quillpad\n\nquillpad is a note-taking app written in Kotlin. It keeps notes in "
        "SQLite and syncs them with Nextcloud."
    )
    p = read_passage(text, HeuristicExtractor(max_entities=10_000, max_edges=10_000))
    pairs = [c for c in pair_candidates(p, set(p.names)) if (c.source, c.target) in p.rule_edges]
    assert any("sqlite" in (c.source, c.target) for c in pairs)
    scorer = Scorer(Linear({}, 0.5, 0.5), Linear({}, 0.9, 0.0))
    every = {k: 0.9 for k in p.names}
    kept = decide(p, every, pairs, [1.0] * len(pairs), scorer)
    assert any("sqlite" in (e.source.lower(), e.target.lower()) for e in kept.edges)
    refused = decide(p, {**every, "sqlite": 0.1}, pairs, [1.0] * len(pairs), scorer)
    assert refused.edges
    assert not any("sqlite" in (e.source.lower(), e.target.lower()) for e in refused.edges)
    assert "sqlite" not in {e.name.lower() for e in refused.entities}
