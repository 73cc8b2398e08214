"""The lexical reader: the entry's own words beside the sentence head's reading of their meaning.

The sentence vectors blur an entry about a hard day into one about a warning sign when the two
share a topic (tiredness, money, the family); the words that set them apart are often plain
ones ("insurance", "passwords", "last time", "rehome") that the vectors average away. This is
a logistic regression over the entry's words and pairs of adjacent words (TF-IDF: one plus the
log of a term's count, times its inverse document frequency, the vector at unit length),
trained on the training writers' entries (a sign against none, the two weighted alike;
``choosing.fit_lexical``). In a model fitted with it (``bench/distress.py --fit --lexical``),
its logit is one more feature of the entry reading, which weighs it against the head's
features, out of fold. It runs in plain Python and numpy (about 0.2 ms an entry) and is kept
inside ``model.npz``. It reads words without their sense: "to end it" about a gym membership
scores like the same words in a goodbye, so the head's reading of meaning has to outweigh it
(and the figures of speech that the explicit patterns set aside, ``patterns.IDIOMS``, are blanked
before either reads the entry).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from itertools import pairwise

import numpy as np

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def terms(text: str) -> Counter[str]:
    """Each word (lower case, a curly apostrophe read as a straight one) and each pair of
    adjacent words, with its count."""
    words = _WORD.findall(text.lower().replace("\u2019", "'"))
    counts = Counter(words)
    counts.update(f"{a} {b}" for a, b in pairwise(words))
    return counts


@dataclass(frozen=True)
class Lexical:
    """The vocabulary (term -> column), each column's inverse document frequency and weight,
    and the bias."""

    vocabulary: dict[str, int]
    idf: np.ndarray  # (terms,)
    weights: np.ndarray  # (terms,)
    bias: float

    def columns(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """The text's known terms' columns and TF-IDF values, at unit length."""
        found = [(self.vocabulary[t], n) for t, n in terms(text).items() if t in self.vocabulary]
        if not found:
            return np.zeros(0, np.int64), np.zeros(0, np.float64)
        cols = np.array([c for c, _ in found], np.int64)
        tf = 1.0 + np.log(np.array([n for _, n in found], np.float64))
        values = tf * self.idf[cols].astype(np.float64)
        return cols, values / max(float(np.linalg.norm(values)), 1e-12)

    def score(self, text: str) -> float:
        """The log odds of a sign in ``text``."""
        cols, values = self.columns(text)
        return float(values @ self.weights[cols].astype(np.float64) + self.bias)

    def arrays(self) -> dict[str, np.ndarray]:
        """What ``model.npz`` keeps: the terms in column order (UTF-8, one a line), and the
        numbers in half precision."""
        ordered = sorted(self.vocabulary, key=self.vocabulary.__getitem__)
        return {
            "lexical_terms": np.frombuffer("\n".join(ordered).encode("utf-8"), np.uint8),
            "lexical_idf": self.idf.astype(np.float16),
            "lexical_weights": self.weights.astype(np.float16),
            "lexical_bias": np.array([self.bias], np.float16),
        }

    @classmethod
    def from_arrays(cls, data: dict[str, np.ndarray]) -> Lexical:
        words = bytes(data["lexical_terms"]).decode("utf-8").split("\n")
        return cls(
            {t: k for k, t in enumerate(words)},
            np.asarray(data["lexical_idf"]).astype(np.float16).astype(np.float32),
            np.asarray(data["lexical_weights"]).astype(np.float16).astype(np.float32),
            float(np.float16(np.asarray(data["lexical_bias"]).reshape(-1)[0])),
        )

    def rounded(self) -> Lexical:
        """The same reader with its numbers rounded to the half precision they ship in."""
        return Lexical.from_arrays(self.arrays())


def vocabulary(texts: list[str], min_count: int = 2) -> tuple[dict[str, int], np.ndarray]:
    """The terms in at least ``min_count`` of ``texts`` (sorted: the same columns on every
    run) and their inverse document frequency, ln((1 + n) / (1 + df)) + 1."""
    df: Counter[str] = Counter()
    for text in texts:
        df.update(terms(text).keys())
    kept = sorted(t for t, n in df.items() if n >= min_count)
    n = len(texts)
    idf = np.array([math.log((1 + n) / (1 + df[t])) + 1.0 for t in kept], np.float64)
    return {t: k for k, t in enumerate(kept)}, idf
