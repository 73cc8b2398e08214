"""Distress detector: quality on the held-out writer, and what the gate costs a v3 init.

    python bench/distress.py            # held-out figures, per category, and the cost
    python bench/distress.py --fit      # fit agent/safety/model.npz on the training writers

The development set (tests/agent/fixtures/distress/) has one file per writer, each written
separately from the public warning-sign categories. Writer B (writer_b.jsonl) is held out: it
is never fitted or tuned on. Every other writer is training data. --fit writes the model and
prints the thresholds for ``semantic.PARAMS``, chosen leaving one training writer out at a time.
Caught means risk or concern. The cost is the detector's p50 on held-out entries with the local
model, against the p50 of a whole v3 init of the same entries (which includes it), in one run.
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

from agent.safety import assess, semantic, training  # noqa: E402
from agent.safety.patterns import explicit_match  # noqa: E402

FIXTURES = ROOT / "tests" / "agent" / "fixtures" / "distress"
HELD_OUT = "writer_b.jsonl"
SHARED_ORDINARY = ROOT.parent / "shared" / "datasets" / "crux_dev.jsonl"
TARGETS = {"indirect": 0.90, "benign_risk": 0.05, "benign_any": 0.15, "ordinary": 0.02}


def load(name: str) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in (FIXTURES / name).read_text().splitlines() if line]
    for row in rows:
        row["writer"] = name.removesuffix(".jsonl")
    return rows


def training_items() -> list[dict[str, Any]]:
    names = sorted(p.name for p in FIXTURES.glob("writer_*.jsonl") if p.name != HELD_OUT)
    return [row for name in names for row in load(name)]


def levels(items: list[dict[str, Any]]) -> list[str]:
    """Each item's level through the whole detector (patterns, then the shipped model)."""
    return [assess([i["text"]], where="bench").level for i in items]


def rates(items: list[dict[str, Any]], found: list[str]) -> dict[str, float]:
    by: dict[str, list[str]] = defaultdict(list)
    for item, level in zip(items, found, strict=True):
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


def report(name: str, items: list[dict[str, Any]], found: list[str]) -> None:
    r = rates(items, found)
    print(f"\n== {name}: {len(items)} entries")
    for key, value in r.items():
        target = TARGETS.get(key)
        print(f"  {key:14s} {value:6.3f}" + (f"   target {target}" if target else ""))
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    for item, level in zip(items, found, strict=True):
        groups[(item["label"], item["category"])].append(level)
    for (label, category), got in sorted(groups.items()):
        flagged = sum(level != "none" for level in got)
        risk = sum(level == "risk" for level in got)
        print(f"  {label:12s} {category:26s} flagged {flagged:3d}/{len(got):3d}  risk {risk:3d}")


def fit() -> None:
    items = training_items()
    readings = [semantic.read_texts([i["text"]]) for i in items]
    entries = [
        training.Example(i["writer"], i["label"], i["category"], r.sentences, r.whole)
        for i, r in zip(items, readings, strict=True)
    ]
    explicit = np.array([explicit_match(i["text"]) is not None for i in items])
    model, params, chances = training.fit(entries, explicit)
    found = [
        "risk" if e else ("none" if c < params.concern else "concern")
        for c, e in zip(chances, explicit, strict=True)
    ]
    writers = sorted({i["writer"] for i in items})
    report(f"training writers {writers}, each read out of fold (levels not split)", items, found)
    frontier(items, chances, explicit)
    model.save(semantic.MODEL_PATH)
    print(f"\nwrote {semantic.MODEL_PATH.relative_to(ROOT)}; set semantic.PARAMS to:\n  {params}")


def frontier(items: list[dict[str, Any]], chances: np.ndarray, explicit: np.ndarray) -> None:
    """What each concern threshold gives out of fold: the trade the thresholds were chosen on."""
    labels = np.array([i["label"] for i in items])
    print("\n  threshold  indirect  dark-but-safe  ordinary   (flagged, out of fold)")
    for t in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95):
        flagged = explicit | (chances >= t)
        shares = [flagged[labels == k].mean() for k in ("indirect", "benign_dark", "ordinary")]
        print(f"  {t:9.2f}  " + "  ".join(f"{v:8.3f}" for v in shares))


def cost(items: list[dict[str, Any]]) -> None:
    """p50 of a v3 init with the detector (ours) and with it switched off (the baseline), on
    the same entries, alternating. Each text is new to every cache in both modes (the baseline
    reads it with a trailing newline, which the model reads the same way)."""
    from agent.engine import loop
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
            t0 = time.perf_counter()
            loop.start(JournalEntry(text=item["text"]))
            ours.append((time.perf_counter() - t0) * 1000)
            loop.assess = off  # type: ignore[assignment]
            t0 = time.perf_counter()
            loop.start(JournalEntry(text=item["text"] + "\n"))
            base.append((time.perf_counter() - t0) * 1000)
    finally:
        loop.assess = real
    o, b = statistics.median(ours), statistics.median(base)
    print(f"\n== cost: v3 init on {len(ours)} held-out entries, local model, alternating")
    print(f"  with the detector p50 {o:.2f} ms; without it (baseline) p50 {b:.2f} ms")
    print(f"  added {o - b:+.2f} ms (target <= 10 ms); ratio {o / b:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--fit", action="store_true", help="fit the model on the training writers")
    parser.add_argument("--no-cost", action="store_true", help="skip the latency figures")
    args = parser.parse_args()
    if args.fit:
        fit()
        return
    train = training_items()
    report("training writers (fitted on: optimistic)", train, levels(train))
    held = load(HELD_OUT)
    report("HELD-OUT writer B (never fitted or tuned on)", held, levels(held))
    shared = [
        {"text": json.loads(line)["entry"], "label": "ordinary", "category": "crux_dev"}
        for line in SHARED_ORDINARY.read_text().splitlines()
        if line
    ]
    report("ordinary: the crux dev entries", shared, levels(shared))
    if not args.no_cost:
        cost(held)


if __name__ == "__main__":
    main()
