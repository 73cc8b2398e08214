"""Layer 2 of the distress detector: warning signs read by meaning with the local sentence model.

Two steps, both linear read-outs of all-MiniLM-L6-v2 sentence vectors, shipped in
``model.npz``:

1. **Each sentence against the bank.** A multinomial logistic regression gives every sentence
   a probability per warning-sign category (CATEGORIES) and per "safe" class: the curated
   statements of ``bank.json`` (written from public suicide-prevention guidance, with safe
   look-alikes: grief for someone else, idioms, fiction and games, moving house, a will for a
   new baby, quitting a job, tiredness), everyday sentences (``neutral.json``), and sentences
   of the training writers' entries.
2. **The entry as a whole.** One sentence rarely decides alone: "strange how calm I feel now
   it's decided" is a warning sign after months of lows and relief after quitting a job. A
   logistic regression over the sentence probabilities pooled across the entry (each class's
   highest and mean, and the two sentences with most warning sign) gives the chance that the
   entry shows a sign at all.

A detection needs that chance at ``Params.concern``; its category is the one the entry's
sentences read most like, and the category sets the level (URGENT: risk; otherwise concern). Both models and the thresholds were chosen on the training writers only, never on the
held-out writer (``bench/distress.py --fit``; docs/benchmarks.md gives the held-out figures).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from legacymind.providers.embeddings import local_provider
from legacymind.providers.embeddings.local import TokenReading

MODEL_PATH = Path(__file__).with_name("model.npz")
CATEGORIES = (
    "burden",
    "trapped_pain",
    "hopelessness",
    "goodbye",
    "affairs_in_order",
    "sudden_calm",
    "plan_means",
    "withdrawal",
    "self_harm",
    "explicit",
)
LEVELS = ("none", "concern", "risk")
# Intent, or a plan or means, is a risk: public guidance says to act on it now. The other signs
# are a concern (goodbyes and giving things away read too much like grief and moving house to
# stop a session on their own); a second sign in the same session makes it a risk
# (agent.engine.loop, agent.excavations).
URGENT = ("explicit", "plan_means")
# The transformer layers a sentence is read from (each unit length, side by side): the lower
# layers keep more of the words themselves, which the top layer smooths into topic; the three
# together found a third more warning signs in unseen writers than the top layer alone.
LAYERS = (2, 4, 6)
DIM = 384 * len(LAYERS)
MAX_WORDS = 32  # longer runs (no punctuation) are read in overlapping windows of this many words
_BREAK = re.compile(r"(?<=[.!?])[\"')\]]*\s+|[\n;]+|\s[-\u2013\u2014]\s|\.{3,}|\u2026")
_BULLET = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)])\s*")
_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class Params:
    concern: float = 0.65  # the entry model's chance of a sign at which it is detected


PARAMS = Params()


@dataclass(frozen=True)
class Model:
    sentence_weights: np.ndarray  # (d, classes)
    sentence_bias: np.ndarray  # (classes,)
    classes: tuple[str, ...]  # CATEGORIES among them; the others are safe classes
    entry_weights: np.ndarray  # (features,)
    entry_bias: float

    @property
    def risk_columns(self) -> np.ndarray:
        return np.array([self.classes.index(c) for c in CATEGORIES])

    def save(self, path: Path) -> None:
        np.savez_compressed(
            path,
            sentence_weights=self.sentence_weights,
            sentence_bias=self.sentence_bias,
            classes=np.array(self.classes),
            entry_weights=self.entry_weights,
            entry_bias=np.array([self.entry_bias]),
        )


@lru_cache(maxsize=1)
def model() -> Model:
    with np.load(MODEL_PATH) as data:
        return Model(
            sentence_weights=data["sentence_weights"].astype(np.float32),
            sentence_bias=data["sentence_bias"].astype(np.float32),
            classes=tuple(str(c) for c in data["classes"]),
            entry_weights=data["entry_weights"].astype(np.float64),
            entry_bias=float(data["entry_bias"][0]),
        )


def spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the text's sentences and list items (two words at least); a long
    run without stops is read in overlapping windows of MAX_WORDS words."""
    found: list[tuple[int, int]] = []
    start = 0
    breaks = [(m.start(), m.end()) for m in _BREAK.finditer(text)] + [(len(text), len(text))]
    for stop, after in breaks:
        bullet = _BULLET.match(text[start:stop])
        begin = start + (bullet.end() if bullet else 0)
        words = [(m.start() + begin, m.end() + begin) for m in _WORD.finditer(text[begin:stop])]
        start = after
        if len(words) < 2:
            continue
        if len(words) <= MAX_WORDS:
            found.append((words[0][0], words[-1][1]))
            continue
        step = MAX_WORDS // 2
        for first in range(0, len(words) - step, step):
            last = min(first + MAX_WORDS, len(words)) - 1
            found.append((words[first][0], words[last][1]))
    return found


def pool(reading: TokenReading, parts: list[tuple[int, int]]) -> np.ndarray:
    """(parts, d) unit vectors: the mean of the word pieces inside each character span, read
    in the context of the whole text."""
    rows = []
    for a, b in parts:
        inside = (reading.spans[:, 0] >= a) & (reading.spans[:, 1] <= b)
        if not inside.any():  # past the model's input in every window: cannot be read
            continue
        blocks = np.split(reading.tokens[inside].mean(axis=0), len(LAYERS))
        rows.append(np.concatenate([b / max(float(np.linalg.norm(b)), 1e-12) for b in blocks]))
    return np.vstack(rows).astype(np.float32) if rows else np.zeros((0, DIM), np.float32)


@dataclass(frozen=True)
class Reading:
    sentences: np.ndarray  # (n, d): every sentence of every text, each in its text's context
    whole: np.ndarray  # (d,): each text read as one sentence, averaged


def read_texts(texts: list[str]) -> Reading:
    """Everything the writer wrote, in one pass of the model per text (which also leaves each
    text's embedding for the agent: reading an entry and embedding it cost one pass)."""
    texts = [t for t in texts if spans(t)]
    if not texts:
        return Reading(np.zeros((0, DIM), np.float32), np.zeros(DIM, np.float32))
    readings = local_provider().read_tokens(texts, layers=LAYERS)
    pairs = list(zip(readings, texts, strict=True))
    return Reading(
        sentences=np.vstack([pool(r, spans(t)) for r, t in pairs]),
        whole=np.vstack([pool(r, [(0, len(t))]) for r, t in pairs]).mean(axis=0),
    )


def embed_whole(texts: list[str], batch: int = 64) -> np.ndarray:
    """Each text as one sentence (the bank's statements), pooled the same way."""
    rows = []
    for start in range(0, len(texts), batch):
        chunk = texts[start : start + batch]
        readings = local_provider().read_tokens(chunk, layers=LAYERS)
        rows += [pool(r, [(0, len(t))]) for r, t in zip(readings, chunk, strict=True)]
    return np.vstack(rows)


def sentence_probabilities(
    vectors: np.ndarray, weights: np.ndarray, bias: np.ndarray
) -> np.ndarray:
    """(sentences, classes): each sentence's probability of each class."""
    logits = vectors @ weights + bias
    logits -= logits.max(axis=1, keepdims=True)
    odds = np.exp(logits)
    return np.asarray(odds / odds.sum(axis=1, keepdims=True))


def entry_features(
    probabilities: np.ndarray, whole: np.ndarray, risk_columns: np.ndarray
) -> np.ndarray:
    """What the entry model reads: each class's highest and mean probability over the
    sentences and its probability for the whole text, and the warning-sign mass of the
    entry's first and second such sentence."""
    mass = np.sort(probabilities[:, risk_columns].sum(axis=1))[::-1]
    second = mass[1] if len(mass) > 1 else 0.0
    return np.concatenate(
        [
            probabilities.max(axis=0),
            probabilities.mean(axis=0),
            whole,
            [mass[0], second, mass.mean()],
        ]
    )


def sign_chance(features: np.ndarray, weights: np.ndarray, bias: float) -> float:
    return float(1.0 / (1.0 + np.exp(-(features @ weights + bias))))


def decide(
    chance: float, probabilities: np.ndarray, risk_columns: np.ndarray, params: Params = PARAMS
) -> tuple[str, str | None]:
    """(level, category) from the entry's chance of a sign and its sentences' probabilities."""
    if chance < params.concern:
        return "none", None
    category = CATEGORIES[int(probabilities[:, risk_columns].max(axis=0).argmax())]
    return ("risk" if category in URGENT else "concern"), category


def read(reading: Reading, m: Model, params: Params = PARAMS) -> tuple[str, str | None]:
    """(level, category) of everything the writer wrote."""
    if not len(reading.sentences):
        return "none", None
    probabilities = sentence_probabilities(reading.sentences, m.sentence_weights, m.sentence_bias)
    whole = sentence_probabilities(reading.whole[None, :], m.sentence_weights, m.sentence_bias)
    features = entry_features(probabilities, whole[0], m.risk_columns)
    chance = sign_chance(features, m.entry_weights, m.entry_bias)
    return decide(chance, probabilities, m.risk_columns, params)


def assess(texts: list[str], params: Params = PARAMS) -> tuple[str, str | None]:
    return read(read_texts(texts), model(), params)
