"""Distress detector: quality on the held-out writers, and what the gate costs a v3 init.

    python bench/distress.py            # held-out figures, per category, and the cost
    python bench/distress.py --fit --lexical  # fit agent/safety/model.npz as shipped
    python bench/distress.py --fit      # the same without the lexical reader beside the head

The development set (tests/agent/fixtures/distress/) has one file per writer, each written
separately from the public warning-sign categories. Writers B, J, P and T are held out: they are
never fitted or tuned on. Every other writer is training data. --fit trains the sentence
head and its entry reading (seeded: the same weights on every run on one machine), writes the
model and prints the threshold for ``semantic.PARAMS``, chosen out of fold (a head trained
without each group of training writers in FOLDS reads that group), with the out-of-fold
figures it was chosen on. Caught means risk or concern; "named" counts the flagged
entries whose category is the labelled one. The cost is a whole v3 init of held-out entries
with the detector against one with it switched off, alternating, in one run, and the head's
own p50 (the sentence vectors already read).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "legacymind.settings")
os.environ.setdefault("DJANGO_DEBUG", "1")
os.environ["EMBEDDING_PROVIDER"] = "local"
os.environ.setdefault("DISTRESS_MODEL_CHECK", "off")

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402

from agent.safety import assess, choosing, semantic, training  # noqa: E402
from agent.safety.patterns import explicit_match  # noqa: E402

FIXTURES = ROOT / "tests" / "agent" / "fixtures" / "distress"
# Never fitted or tuned on: B since the detector was first built; J, P, T, U, Y and Z, written
# later by others from the same categories, to give more unseen writers (a writer not yet
# written is listed too, so that the training glob never takes it in when it lands). Training
# writers V and W and the explicit bank X (150 explicit entries by 15 imagined writers) are in
# the shipped model's fit (--fit --lexical).
HELD_OUT = (
    "writer_b.jsonl",
    "writer_j.jsonl",
    "writer_p.jsonl",
    "writer_t.jsonl",
    "writer_u.jsonl",
    "writer_y.jsonl",
    "writer_z.jsonl",
)
SHARED_ORDINARY = ROOT.parent / "shared" / "datasets" / "crux_dev.jsonl"
# Everyday journal entries by other writers (the crux set: people working through approval,
# fear of failure, grief, conflict...), none of them at risk. The crux set's training writers
# are training data here too; its held-out writers and the shared crux entries are only scored.
CRUX = ROOT / "tests" / "agent" / "fixtures" / "crux"
CRUX_TRAIN = ("writer_01", "writer_02", "writer_03", "writer_04")
CRUX_HELD_OUT = tuple(f"writer_{i:02d}" for i in range(5, 15))
# The training writers' folds for the out-of-fold readings: three groups, each a mix of full
# mixes and writers of mostly hard days (a head is trained for each, and the entry reading
# is fitted on the other groups' readings); a writer in no group is a fold of its own.
FOLDS = (
    ("crux_train", "writer_a", "writer_d", "writer_l", "writer_o", "writer_r", "writer_v"),
    ("writer_c", "writer_g", "writer_h", "writer_k", "writer_q", "writer_w"),
    ("writer_e", "writer_f", "writer_i", "writer_m", "writer_n", "writer_x"),
)
TARGETS = {"indirect": 0.90, "benign_risk": 0.05, "benign_any": 0.15, "ordinary": 0.02}


def load(name: str) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in (FIXTURES / name).read_text().splitlines() if line]
    for row in rows:
        row["writer"] = name.removesuffix(".jsonl")
    return rows


def crux_entries(writers: tuple[str, ...], fold: str | None = None) -> list[dict[str, Any]]:
    """The crux set's entries by ``writers`` as ordinary entries about a hard day (their
    category is the crux archetype), all in one fold named ``fold`` when given."""
    rows = []
    for writer in writers:
        for line in (CRUX / f"{writer}.jsonl").read_text().splitlines():
            if line:
                item = json.loads(line)
                rows.append(
                    {
                        "text": item["entry"],
                        "label": "ordinary",
                        "category": item["archetype"],
                        "writer": fold or f"crux_{writer}",
                    }
                )
    return rows


def training_items() -> list[dict[str, Any]]:
    names = sorted(p.name for p in FIXTURES.glob("writer_*.jsonl") if p.name not in HELD_OUT)
    # The crux writers make one fold: left out together, they are an unseen writer's everyday
    # entries, as the distress writers are one at a time.
    return [row for name in names for row in load(name)] + crux_entries(CRUX_TRAIN, "crux_train")


Found = list[tuple[str, str | None]]  # each item's level and category


def levels(items: list[dict[str, Any]]) -> Found:
    """Each item's level and category through the whole detector (patterns, then the model)."""
    found = [assess([i["text"]], where="bench") for i in items]
    return [(a.level, a.category) for a in found]


def rates(items: list[dict[str, Any]], found: Found) -> dict[str, float]:
    by: dict[str, list[str]] = defaultdict(list)
    for item, (level, _) in zip(items, found, strict=True):
        by[item["label"]].append(level)

    def share(label: str, ok: tuple[str, ...]) -> float:
        got = by.get(label, [])
        return sum(level in ok for level in got) / len(got) if got else 0.0

    return {
        "indirect": share("indirect", ("risk", "concern")),
        "explicit_risk": share("explicit", ("risk",)),
        "benign_risk": share("benign_dark", ("risk",)),
        "benign_any": share("benign_dark", ("risk", "concern")),
        "ordinary": share("ordinary", ("risk", "concern")),
    }


def report(name: str, items: list[dict[str, Any]], found: Found) -> None:
    r = rates(items, found)
    print(f"\n== {name}: {len(items)} entries")
    for key, value in r.items():
        target = TARGETS.get(key)
        print(f"  {key:14s} {value:6.3f}" + (f"   target {target}" if target else ""))
    groups: dict[tuple[str, str], Found] = defaultdict(list)
    for item, one in zip(items, found, strict=True):
        groups[(item["label"], item["category"])].append(one)
    for (label, category), group in sorted(groups.items()):
        flagged = sum(level != "none" for level, _ in group)
        risk = sum(level == "risk" for level, _ in group)
        line = f"  {label:12s} {category:26s} flagged {flagged:3d}/{len(group):3d}  risk {risk:3d}"
        if label in training.SIGN:
            named = sum(level != "none" and got == category for level, got in group)
            line += f"  named {named:3d}"
        print(line)


def read_all(texts: list[str], cache: Path | None) -> list[semantic.Reading]:
    """Each text's sentence vectors; with ``cache``, kept between runs (a pickle keyed by the
    text: the vectors depend on nothing else)."""
    import pickle

    store: dict[str, semantic.Reading] = {}
    if cache and cache.exists():
        store = pickle.loads(cache.read_bytes())
    missing = [t for t in dict.fromkeys(texts) if t not in store]
    for text in missing:
        store[text] = semantic.read_texts([text])
    if cache and missing:
        cache.write_bytes(pickle.dumps(store))
    return [store[t] for t in texts]


def fit(
    workers: int = 1,
    out: Path = semantic.MODEL_PATH,
    cache: Path | None = None,
    lexical: bool = False,
) -> None:
    items = training_items()
    readings = read_all([i["text"] for i in items], cache)
    entries = [
        training.Example(i["writer"], i["label"], i["category"], r.sentences, r.whole, i["text"])
        for i, r in zip(items, readings, strict=True)
    ]
    patterns = [explicit_match(i["text"]) for i in items]
    explicit = np.array([p is not None for p in patterns])
    model, params, chances, categories = choosing.fit(entries, explicit, workers, FOLDS, lexical)
    found: Found = []
    for chance, category, pattern in zip(chances, categories, patterns, strict=True):
        if pattern:  # the patterns come first, as in assess
            found.append(("risk", pattern))
        elif category is None:
            found.append(("none", None))
        else:
            found.append(semantic.decide(chance, category, params))
    writers = ", ".join(sorted({i["writer"] for i in items}))
    report(f"training writers ({writers}), each read out of fold", items, found)
    urgent = np.array([c in semantic.URGENT for c in categories])
    frontier(items, chances, explicit, urgent)
    risk_frontier(items, chances, explicit, urgent, params.concern)
    model.save(out)
    print(f"\nwrote {out}; set semantic.PARAMS to:\n  {params}")


def frontier(
    items: list[dict[str, Any]], chances: np.ndarray, explicit: np.ndarray, urgent: np.ndarray
) -> None:
    """What each concern threshold gives out of fold: the trade the threshold was chosen on."""
    labels = np.array([i["label"] for i in items])
    print("\n  out of fold: threshold, indirect caught, dark-but-safe flagged (at risk), ordinary")
    for t in (0.3, 0.4, 0.5, 0.6, 0.65, 0.7, 0.8, 0.9, 0.95):
        flagged = explicit | (chances >= t)
        at_risk = explicit | (urgent & flagged)
        benign = labels == "benign_dark"
        print(
            f"  {t:9.2f}  {flagged[labels == 'indirect'].mean():8.3f}  "
            f"{flagged[benign].mean():8.3f} ({at_risk[benign].mean():.3f})  "
            f"{flagged[labels == 'ordinary'].mean():8.3f}"
        )


def risk_frontier(
    items: list[dict[str, Any]],
    chances: np.ndarray,
    explicit: np.ndarray,
    urgent: np.ndarray,
    concern: float,
) -> None:
    """What each risk bar gives out of fold at the chosen threshold: the trade the bar was
    chosen on (at risk: a pattern, or an urgent category at the bar)."""
    labels = np.array([i["label"] for i in items])
    plans = np.array([i["label"] == "indirect" and i["category"] == "plan_means" for i in items])
    print(
        "\n  out of fold: risk bar, at risk by meaning: ordinary, dark-but-safe;"
        " at risk: plans and means, explicit"
    )
    for bar in (concern, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95):
        by_meaning = urgent & (chances >= bar)
        at_risk = explicit | by_meaning
        print(
            f"  {bar:9.2f}  {(by_meaning & ~explicit)[labels == 'ordinary'].mean():8.4f}  "
            f"{(by_meaning & ~explicit)[labels == 'benign_dark'].mean():8.4f}  "
            f"{at_risk[plans].mean():8.3f}  {at_risk[labels == 'explicit'].mean():8.3f}"
        )


def cost(items: list[dict[str, Any]]) -> None:
    """p50 of a v3 init with the detector (ours) and with it switched off (the baseline), on
    the same entries, alternating. Each text is new to every cache in both modes (the baseline
    reads it with a trailing newline, which the model reads the same way; the cache of the
    entry's spans, which the two texts share, is emptied before each)."""
    from agent.engine import compose, loop
    from agent.safety import NONE
    from agent.schemas import JournalEntry

    def off(texts: list[str], *, where: str) -> Any:
        return NONE

    for item in training_items()[:5]:  # warm: the model, the crux statements' cache
        loop.start(JournalEntry(text=item["text"]))
    ours, base = [], []
    real = loop.assess
    try:
        for item in items[:150]:
            loop.assess = real
            compose._embed_spans.cache_clear()
            t0 = time.perf_counter()
            loop.start(JournalEntry(text=item["text"]))
            ours.append((time.perf_counter() - t0) * 1000)
            loop.assess = off  # type: ignore[assignment]
            compose._embed_spans.cache_clear()
            t0 = time.perf_counter()
            loop.start(JournalEntry(text=item["text"] + "\n"))
            base.append((time.perf_counter() - t0) * 1000)
    finally:
        loop.assess = real
    o, b = statistics.median(ours), statistics.median(base)
    print(f"\n== cost: v3 init on {len(ours)} held-out entries, local model, alternating")
    print(f"  with the detector p50 {o:.2f} ms; without it (baseline) p50 {b:.2f} ms")
    print(f"  added {o - b:+.2f} ms (target <= 10 ms); ratio {o / b:.2f}x")
    readings = [semantic.read_texts([i["text"]]) for i in items[:150]]
    head, times = semantic.model(), []
    for reading in readings * 5:
        t0 = time.perf_counter()
        semantic.read(reading, head)
        times.append((time.perf_counter() - t0) * 1000)
    size = semantic.MODEL_PATH.stat().st_size / 1e6
    print(
        f"  the head alone, p50 {statistics.median(times):.3f} ms an entry; model.npz {size:.2f} MB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--fit", action="store_true", help="fit the model on the training writers")
    parser.add_argument("--no-cost", action="store_true", help="skip the latency figures")
    parser.add_argument(
        "--held-out-only", action="store_true", help="skip the training writers' figures"
    )
    parser.add_argument(
        "--out", type=Path, default=semantic.MODEL_PATH, help="where --fit writes the model"
    )
    parser.add_argument(
        "--cache", type=Path, help="keep the sentence vectors between --fit runs in this file"
    )
    parser.add_argument(
        "--workers", type=int, default=1, help="processes for the out-of-fold heads (--fit)"
    )
    parser.add_argument(
        "--lexical",
        action="store_true",
        help="fit the lexical reader beside the head (--fit; the shipped model has one)",
    )
    parser.add_argument(
        "--writers",
        nargs="+",
        metavar="LETTER",
        help="score only these held-out writers (b j p t u); every one by default",
    )
    args = parser.parse_args()
    if args.fit:
        fit(args.workers, args.out, args.cache, args.lexical)
        return
    if not args.held_out_only:
        train = training_items()
        report("training writers (fitted on: optimistic)", train, levels(train))
    held: list[dict[str, Any]] = []
    chosen = {f"writer_{w.lower()}.jsonl" for w in args.writers} if args.writers else None
    for name in HELD_OUT:
        if not (FIXTURES / name).exists() or (chosen is not None and name not in chosen):
            continue
        rows = load(name)
        writer = name.removesuffix(".jsonl").removeprefix("writer_").upper()
        report(f"HELD-OUT writer {writer} (never fitted or tuned on)", rows, levels(rows))
        held += rows
    if len({r["writer"] for r in held}) > 1:
        report("HELD-OUT writers together", held, levels(held))
    shared = [
        {"text": json.loads(line)["entry"], "label": "ordinary", "category": "crux_dev"}
        for line in SHARED_ORDINARY.read_text().splitlines()
        if line
    ]
    report("ordinary: the crux dev entries", shared, levels(shared))
    crux_held = crux_entries(CRUX_HELD_OUT)
    report("ordinary: the crux set's held-out writers", crux_held, levels(crux_held))
    if not args.no_cost:
        cost(held)


if __name__ == "__main__":
    main()
