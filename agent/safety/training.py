"""How ``model.npz`` is made (``bench/distress.py --fit``); nothing here runs in a request.

**Sentence model** (multinomial logistic regression), from:
- the bank (``bank.json``): statements per warning-sign category, and safe look-alikes;
- everyday sentences (``neutral.json``);
- the training writers' entries (never the held-out writer): every sentence of a
  dark-but-safe or ordinary entry is a negative, since none of them shows a sign; from an entry
  with a sign, the one sentence that a bank-only model finds closest to the entry's labelled
  category is a positive of that category (multiple-instance learning: the label says a sign is
  there, not where).

**Entry model** (logistic regression over ``semantic.entry_features``), fitted on features that
are out of fold: each training writer's entries are read by a sentence model fitted without
that writer, as an unseen writer's would be. The thresholds are chosen on the entry model's
out-of-fold chances the same way, leaving one writer out at a time.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from agent.safety.semantic import (
    CATEGORIES,
    URGENT,
    Model,
    Params,
    embed_whole,
    entry_features,
    sentence_probabilities,
    sign_chance,
)

HERE = Path(__file__).parent
SENTENCE_C = 16.0  # inverse L2 strength of the sentence model
ENTRY_C = 1.0  # ... and of the entry model
NEGATIVE = {"benign_dark": "dev:dark_but_safe", "ordinary": "dev:ordinary"}
SIGN = ("indirect", "explicit")


@dataclass
class Example:
    """One training entry: who wrote it, its label and category, its sentences' vectors."""

    writer: str
    label: str
    category: str
    vectors: np.ndarray  # its sentences
    whole: np.ndarray  # the entry's own embedding


@dataclass(frozen=True)
class SentenceModel:
    weights: np.ndarray
    bias: np.ndarray
    classes: tuple[str, ...]

    @property
    def risk_columns(self) -> np.ndarray:
        return np.array([self.classes.index(c) for c in CATEGORIES])

    def probabilities(self, vectors: np.ndarray) -> np.ndarray:
        return sentence_probabilities(vectors, self.weights, self.bias)


@lru_cache(maxsize=1)
def bank_examples() -> tuple[np.ndarray, tuple[str, ...]]:
    """The bank's and the everyday sentences' vectors and classes."""
    bank = json.loads((HERE / "bank.json").read_text(encoding="utf-8"))
    neutral = json.loads((HERE / "neutral.json").read_text(encoding="utf-8"))["neutral"]
    texts: list[str] = []
    labels: list[str] = []
    for category in CATEGORIES:
        texts += bank["risk"][category]
        labels += [category] * len(bank["risk"][category])
    for prefix, groups in (("safe", bank["safe"]), ("neutral", neutral)):
        for group, statements in groups.items():
            texts += statements
            labels += [f"{prefix}:{group}"] * len(statements)
    return embed_whole(texts), tuple(labels)


def _logistic(x: np.ndarray, labels: list[str], c: float) -> tuple[np.ndarray, np.ndarray, list]:
    from sklearn.linear_model import LogisticRegression

    fitted = LogisticRegression(C=c, max_iter=5000, class_weight="balanced").fit(x, labels)
    return fitted.coef_, fitted.intercept_, list(fitted.classes_)


def fit_sentences(x: np.ndarray, labels: list[str], c: float = SENTENCE_C) -> SentenceModel:
    coef, intercept, classes = _logistic(x, labels, c)
    return SentenceModel(
        coef.T.astype(np.float32), intercept.astype(np.float32), tuple(map(str, classes))
    )


def entry_sentences(entries: list[Example], seed: SentenceModel) -> tuple[np.ndarray, list[str]]:
    """Sentences of training entries with their classes (see the module's docstring)."""
    rows: list[np.ndarray] = []
    labels: list[str] = []
    for entry in entries:
        if not len(entry.vectors):
            continue
        if entry.label in NEGATIVE:
            # A hard day (self-doubt, loneliness, burnout) is its own class: it reads most like
            # a warning sign without being one.
            struggling = entry.label == "ordinary" and entry.category != "ordinary"
            rows.append(entry.vectors)
            labels += ["dev:struggling" if struggling else NEGATIVE[entry.label]] * len(
                entry.vectors
            )
            continue
        category = entry.category if entry.category in CATEGORIES else "explicit"
        column = seed.classes.index(category)
        best = int(seed.probabilities(entry.vectors)[:, column].argmax())
        rows.append(entry.vectors[best : best + 1])
        labels.append(category)
    return np.vstack(rows), labels


def sentence_model(entries: list[Example]) -> SentenceModel:
    bx, by = bank_examples()
    seed = fit_sentences(bx, list(by))
    ex, ey = entry_sentences(entries, seed)
    return fit_sentences(np.vstack([bx, ex]), [*by, *ey])


def features(entry: Example, sentences: SentenceModel) -> np.ndarray:
    whole = sentences.probabilities(entry.whole[None, :])[0]
    return entry_features(sentences.probabilities(entry.vectors), whole, sentences.risk_columns)


def folds(entries: list[Example]) -> list[np.ndarray]:
    """One fold per writer (an unseen writer is what the figures must hold on), or five
    random folds when there is a single writer."""
    writers = sorted({e.writer for e in entries})
    if len(writers) > 1:
        return [np.array([i for i, e in enumerate(entries) if e.writer == w]) for w in writers]
    order = np.random.default_rng(0).permutation(len(entries))
    return [order[k::5] for k in range(5)]


def out_of_fold_features(entries: list[Example]) -> np.ndarray:
    rows: list[np.ndarray] = [np.zeros(0)] * len(entries)
    for held in folds(entries):
        others = sorted(set(range(len(entries))) - set(held.tolist()))
        sentences = sentence_model([entries[i] for i in others])
        for i in held:
            rows[i] = features(entries[i], sentences)
    return np.vstack(rows)


def _targets(entries: list[Example]) -> np.ndarray:
    return np.array([e.label in SIGN for e in entries], dtype=int)


def fit_entries(x: np.ndarray, y: np.ndarray, c: float = ENTRY_C) -> tuple[np.ndarray, float]:
    from sklearn.linear_model import LogisticRegression

    fitted = LogisticRegression(C=c, max_iter=5000).fit(x, y)
    return fitted.coef_[0].astype(np.float64), float(fitted.intercept_[0])


def out_of_fold_chances(entries: list[Example], x: np.ndarray) -> np.ndarray:
    y = _targets(entries)
    chances = np.zeros(len(entries))
    for held in folds(entries):
        others = np.setdiff1d(np.arange(len(entries)), held)
        weights, bias = fit_entries(x[others], y[others])
        chances[held] = [sign_chance(x[i], weights, bias) for i in held]
    return chances


# The false-positive bounds the threshold is chosen under, out of fold. A miss is the worst
# failure, so the threshold is the lowest that keeps dark-but-safe entries inside their targets
# (15% flagged, 5% at risk) less a margin for a writer unlike the training ones. The 2% target
# for ordinary entries cannot be met with recall above about one half (entries about a hard
# day read like a warning sign: docs/benchmarks.md); they are held to the dark-but-safe bound.
MAX_ORDINARY = 0.15  # ordinary entries flagged
MAX_BENIGN = 0.10  # dark-but-safe entries flagged
MAX_BENIGN_RISK = 0.04  # dark-but-safe entries at risk


def thresholds(
    entries: list[Example], chances: np.ndarray, urgent: np.ndarray, explicit: np.ndarray
) -> Params:
    """The lowest concern threshold (the best recall of entries with a sign) whose false
    positives stay inside the targets less a margin (MAX_ORDINARY, MAX_BENIGN,
    MAX_BENIGN_RISK); a detection is a risk when its category is urgent."""
    labels = np.array([e.label for e in entries])
    benign, ordinary = labels == "benign_dark", labels == "ordinary"
    for concern in np.round(np.arange(0.05, 1.0, 0.01), 2):
        flagged = explicit | (chances >= concern)
        at_risk = explicit | (urgent & flagged)
        if (
            flagged[ordinary].mean() <= MAX_ORDINARY
            and flagged[benign].mean() <= MAX_BENIGN
            and at_risk[benign].mean() <= MAX_BENIGN_RISK
        ):
            return Params(concern=float(concern))
    raise ValueError("no threshold keeps the false positives inside the targets")


def fit(entries: list[Example], explicit: np.ndarray) -> tuple[Model, Params, np.ndarray]:
    """The shipped model and thresholds, and the out-of-fold chances they were chosen on."""
    x = out_of_fold_features(entries)
    chances = out_of_fold_chances(entries, x)
    # The category an entry's top sentence reads as, from the out-of-fold maxima (the first
    # features are each class's highest probability, in the sentence model's class order).
    final = sentence_model(entries)
    risk_max = x[:, : len(final.classes)][:, final.risk_columns]
    urgent = np.array([CATEGORIES[int(r.argmax())] in URGENT for r in risk_max])
    params = thresholds(entries, chances, urgent, explicit)
    weights, bias = fit_entries(x, _targets(entries))
    model = Model(final.weights, final.bias, final.classes, weights, bias)
    return model, params, chances
