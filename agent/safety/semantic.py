"""Layer 2 of the distress detector: warning signs read by meaning with the local sentence model.

Each sentence of the entry is an all-MiniLM-L6-v2 vector (``pool``: layers 2, 4 and 6, read
in the context of the whole text). A small multilayer perceptron, shipped in ``model.npz`` and
run here in numpy, gives every sentence a logit per class: the warning-sign categories
(CATEGORIES) and safe classes (the safe look-alikes of ``bank.json``: grief for someone else,
idioms, fiction and games, moving house, a will for a new baby, quitting a job, tiredness...;
the everyday sentences of ``neutral.json``; and the training writers' dark-but-safe, ordinary
and hard-day entries). A sentence's **sign score** is how much likelier any category is than
any safe class (log odds). The **entry reading** (``Entry``, a logistic regression over
``entry_features``: the highest sentence scores, the whole text read as one sentence, how much
of the entry reads like an ordinary hard day, the chance of each category, and, in a model
that has one, the lexical reader's log odds of a sign from the entry's own words:
``agent.safety.lexical``) turns what the head says of every sentence into the entry's chance
of a sign, so one harsh sentence in an ordinary entry about a hard day needs support from the
rest (multiple-instance learning trains the head: one sentence is enough to show a sign, and a
label says that a sign is there, not where).

A detection needs the entry's chance of a sign at ``Params.concern``. Its category is the one
that any of its sentences reads most like (the head's highest probability of a category in any
row), and the category sets the level: an URGENT category is a risk when the chance also
reaches the higher ``Params.risk`` bar, a concern below it; any other category is a concern.
The head, the entry reading, the threshold and the bar were chosen on the training writers
only, never on the held-out writers (``agent/safety/training.py``, ``bench/distress.py --fit``; docs/benchmarks.md gives
the held-out figures).
"""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from agent.safety.lexical import Lexical
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
# (agent.engine.loop, agent.excavations). By meaning alone an URGENT category is a risk only
# above ``Params.risk`` (an everyday worry about pills or a deadline date can read like a plan):
# below it, a concern. Explicit statements are a risk through the patterns, whatever the bar.
URGENT = ("explicit", "plan_means")
# The head's safe classes for the training writers' entries that the entry reading weighs: an
# ordinary entry about a hard day, an ordinary entry, a dark-but-safe one.
SAFE_ENTRY_CLASSES = ("dev:struggling", "dev:ordinary", "dev:dark_but_safe")
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
    concern: float = 0.47  # the entry's chance of a sign at which it is detected
    # The chance at which a detection of an URGENT category is a risk rather than a concern:
    # chosen out of fold so that ordinary and dark-but-safe entries at risk stay at 1% or less
    # (``training.risk_bar``).
    risk: float = 0.79


PARAMS = Params()


@dataclass(frozen=True)
class Entry:
    """The entry reading: a logistic regression over ``entry_features`` (standardised by
    ``centre`` and ``scale``), so that one sentence that reads like a sign needs the support of
    the rest of the entry (a second such sentence, the whole text, how much of the entry reads
    like a hard day) before it counts."""

    centre: np.ndarray  # (features,)
    scale: np.ndarray  # (features,)
    weights: np.ndarray  # (features,)
    bias: np.ndarray  # (1,)

    def chance(self, features: np.ndarray) -> float:
        z = float(((features - self.centre) / self.scale) @ self.weights + self.bias[0])
        return float(1.0 / (1.0 + np.exp(-z)))


@dataclass(frozen=True)
class Model:
    """The sentence head: DIM -> hidden (GELU, tanh form) -> one logit per class; and, when
    fitted, the entry reading over what the head says of every sentence and the lexical
    reader's score of the entry's words (``Entry``, ``Lexical``)."""

    hidden_weights: np.ndarray  # (DIM, hidden)
    hidden_bias: np.ndarray  # (hidden,)
    out_weights: np.ndarray  # (hidden, classes)
    out_bias: np.ndarray  # (classes,)
    classes: tuple[str, ...]  # CATEGORIES first, in that order; then the safe classes
    entry: Entry | None = None
    # Only beside an entry reading, which then weighs its score as one more feature.
    lexical: Lexical | None = None

    def logits(self, vectors: np.ndarray) -> np.ndarray:
        """(rows, classes) for (rows, DIM) sentence vectors. The products are numpy's own loops
        (einsum), not BLAS: a BLAS product this size starts OpenBLAS's threads, which then spin
        for ~0.1 s beside the model's, and the rest of a v3 init (embedding the entry's
        spans) took ~90 ms longer; the loops take ~0.5 ms for an entry."""
        h = np.einsum("ij,jk->ik", vectors, self.hidden_weights, optimize=False)
        h = h + self.hidden_bias
        h = 0.5 * h * (1.0 + np.tanh(0.7978845608028654 * (h + 0.044715 * h**3)))
        out = np.einsum("ij,jk->ik", h, self.out_weights, optimize=False)
        return np.asarray(out + self.out_bias)

    def with_entry(self, entry: Entry | None, lexical: Lexical | None = None) -> Model:
        return Model(
            self.hidden_weights,
            self.hidden_bias,
            self.out_weights,
            self.out_bias,
            self.classes,
            entry,
            lexical,
        ).rounded()

    def save(self, path: Path) -> None:
        """An ``.npz`` of the weights in half precision (see ``rounded``), byte for byte the
        same for the same weights (no time stamps)."""
        arrays = {
            "hidden_weights": self.hidden_weights.astype(np.float16),
            "hidden_bias": self.hidden_bias.astype(np.float16),
            "out_weights": self.out_weights.astype(np.float16),
            "out_bias": self.out_bias.astype(np.float16),
            "classes": np.array(self.classes),
        }
        if self.entry is not None:
            for name in ("centre", "scale", "weights", "bias"):
                arrays[f"entry_{name}"] = getattr(self.entry, name).astype(np.float16)
        if self.lexical is not None:
            arrays.update(self.lexical.arrays())
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
            for name, array in arrays.items():
                member = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
                member.compress_type = zipfile.ZIP_DEFLATED
                with archive.open(member, "w") as out:
                    np.lib.format.write_array(out, array, allow_pickle=False)

    def rounded(self) -> Model:
        """The same model with its weights rounded to the half precision they ship in (so a
        model fitted in memory and the same model read back from disk decide alike)."""

        def half(weights: np.ndarray) -> np.ndarray:
            return np.asarray(weights).astype(np.float16).astype(np.float32)

        entry = self.entry
        if entry is not None:
            entry = Entry(
                half(entry.centre), half(entry.scale), half(entry.weights), half(entry.bias)
            )
        return Model(
            half(self.hidden_weights),
            half(self.hidden_bias),
            half(self.out_weights),
            half(self.out_bias),
            self.classes,
            entry,
            None if self.lexical is None else self.lexical.rounded(),
        )

    @classmethod
    def load(cls, path: Path) -> Model:
        with np.load(path) as data:
            classes = tuple(str(c) for c in data["classes"])
            if classes[: len(CATEGORIES)] != CATEGORIES:
                raise ValueError(f"{path}: the categories must come first, in CATEGORIES order")
            entry, lexical = None, None
            if "entry_weights" in data.files:
                entry = Entry(*(data[f"entry_{n}"] for n in ("centre", "scale", "weights", "bias")))
                if "lexical_terms" in data.files:
                    lexical = Lexical.from_arrays(
                        {n: data[n] for n in data.files if "lexical_" in n}
                    )
                needs = len(FEATURES) + (lexical is not None)
                if len(entry.weights) != needs:
                    raise ValueError(f"{path}: the entry reading needs {needs} weights")
            return cls(
                data["hidden_weights"],
                data["hidden_bias"],
                data["out_weights"],
                data["out_bias"],
                classes,
                entry,
                lexical,
            ).rounded()


@lru_cache(maxsize=1)
def model() -> Model:
    return Model.load(MODEL_PATH)


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
    text: str = ""  # the texts, one a paragraph, for the lexical reader


def read_texts(texts: list[str]) -> Reading:
    """Everything the writer wrote, in one pass of the model per text (which also leaves each
    text's embedding for the agent: reading an entry and embedding it cost one pass)."""
    texts = [t for t in texts if spans(t)]
    if not texts:
        return Reading(np.zeros((0, DIM), np.float32), np.zeros(DIM, np.float32), "")
    readings = local_provider().read_tokens(texts, layers=LAYERS)
    pairs = list(zip(readings, texts, strict=True))
    return Reading(
        sentences=np.vstack([pool(r, spans(t)) for r, t in pairs]),
        whole=np.vstack([pool(r, [(0, len(t))]) for r, t in pairs]).mean(axis=0),
        text="\n\n".join(texts),
    )


def embed_whole(texts: list[str], batch: int = 64) -> np.ndarray:
    """Each text as one sentence (the bank's statements), pooled the same way."""
    rows = []
    for start in range(0, len(texts), batch):
        chunk = texts[start : start + batch]
        readings = local_provider().read_tokens(chunk, layers=LAYERS)
        rows += [pool(r, [(0, len(t))]) for r, t in zip(readings, chunk, strict=True)]
    return np.vstack(rows)


def sign_scores(logits: np.ndarray) -> np.ndarray:
    """(rows,): log odds of any warning-sign category against any safe class, per row."""

    def logsumexp(x: np.ndarray) -> np.ndarray:
        top = x.max(axis=1)
        return np.asarray(top + np.log(np.exp(x - top[:, None]).sum(axis=1)))

    n = len(CATEGORIES)
    return logsumexp(logits[:, :n]) - logsumexp(logits[:, n:])


# What the entry reading weighs (``entry_features``), in this order.
FEATURES = (
    "top",  # the highest sign score, the whole text counting as a sentence: the head's own reading
    "first",  # the sentences' highest sign score
    "second",  # their second highest (the highest again when there is one)
    "third",
    "whole",  # the whole text read as one sentence
    "mean",  # the sentences' mean score
    "share_signed",  # the share of sentences that read more like a sign than not
    "hard_day_top",  # log chance, in the highest-scoring row, of an ordinary hard day
    "hard_day_whole",  # the same in the whole text
    "hard_day_mean",  # the same, the sentences' mean chance
    "ordinary_whole",  # log chance of an ordinary entry, in the whole text
    "dark_whole",  # log chance of a dark-but-safe entry, in the whole text
    "near_top",  # the share of sentences within one unit of the highest score
    *(f"most_{c}" for c in CATEGORIES),  # log of the highest chance of each category, any row
)
# With a lexical reader, the entry reading weighs its log odds of a sign (``Lexical.score``)
# after these.
_FLOOR = 1e-6


def entry_features(m: Model, logits: np.ndarray, text: str) -> np.ndarray:
    """(FEATURES,) from the head's logits of an entry's rows (its sentences, then the whole),
    then, when the model has a lexical reader, its score of the entry's ``text``."""
    scores = sign_scores(logits)
    sentences, whole = scores[:-1], float(scores[-1])
    ranked = np.sort(sentences)[::-1]
    top3 = [float(ranked[min(k, len(ranked) - 1)]) for k in range(3)]
    odds = np.exp(logits - logits.max(axis=1, keepdims=True))
    p = odds / odds.sum(axis=1, keepdims=True)
    hard, ordinary, dark = (m.classes.index(c) for c in SAFE_ENTRY_CLASSES)
    top_row = int(np.argmax(scores))
    values = [
        max(top3[0], whole),
        *top3,
        whole,
        float(sentences.mean()),
        float((sentences > 0).mean()),
        float(np.log(p[top_row, hard] + _FLOOR)),
        float(np.log(p[-1, hard] + _FLOOR)),
        float(np.log(p[:-1, hard].mean() + _FLOOR)),
        float(np.log(p[-1, ordinary] + _FLOOR)),
        float(np.log(p[-1, dark] + _FLOOR)),
        float((sentences > top3[0] - 1.0).mean()),
        *np.log(p[:, : len(CATEGORIES)].max(axis=0) + _FLOOR),
    ]
    if m.lexical is not None:
        values.append(m.lexical.score(text))
    return np.asarray(values, dtype=np.float32)


def judge(m: Model, sentences: np.ndarray, whole: np.ndarray, text: str) -> tuple[float, str]:
    """The entry's chance of a sign and its category: the one that any of its sentences reads
    most like (the highest probability of a category in any row). The chance is the entry
    reading's (``Entry``, over the head's rows and the lexical reader's score of ``text``)
    when the model has one; otherwise the logistic of the highest sentence score, the whole
    text counting as one more sentence."""
    logits = m.logits(np.vstack([sentences, whole[None, :]]))
    odds = np.exp(logits - logits.max(axis=1, keepdims=True))
    probabilities = odds / odds.sum(axis=1, keepdims=True)
    category = CATEGORIES[int(probabilities[:, : len(CATEGORIES)].max(axis=0).argmax())]
    if m.entry is not None:
        return m.entry.chance(entry_features(m, logits, text)), category
    top = float(sign_scores(logits).max())
    return float(1.0 / (1.0 + np.exp(-top))), category


def decide(chance: float, category: str, params: Params = PARAMS) -> tuple[str, str | None]:
    """(level, category) from the entry's chance of a sign and its category: a detection at
    ``params.concern``; a risk when its category is URGENT and the chance reaches
    ``params.risk``, otherwise a concern."""
    if chance < params.concern:
        return "none", None
    urgent = category in URGENT and chance >= params.risk
    return ("risk" if urgent else "concern"), category


def read(reading: Reading, m: Model, params: Params = PARAMS) -> tuple[str, str | None]:
    """(level, category) of everything the writer wrote."""
    if not len(reading.sentences):
        return "none", None
    return decide(*judge(m, reading.sentences, reading.whole, reading.text), params)


def assess(texts: list[str], params: Params = PARAMS) -> tuple[str, str | None]:
    return read(read_texts(texts), model(), params)
