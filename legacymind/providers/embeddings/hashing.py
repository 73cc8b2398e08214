"""``hash``: deterministic feature hashing of words and word bigrams, in numpy (tests, tiny
installs)."""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Sequence

import numpy as np

from legacymind.providers.embeddings.base import checked, normalise

HASH_DEFAULT_DIM = 384
_TOKEN = re.compile(r"[a-z0-9]+")


class HashEmbedder:
    """Signed feature hashing of words and word bigrams. Deterministic across processes."""

    name = "hash"
    # Features whose slot is remembered (words and bigrams recur: Zipf): the hash of a feature
    # cost ~0.6 µs in Python, most of an embedding's time and of a ``reembed`` with this
    # provider. Cleared when full, so memory stays bounded (~12 MB) whatever the text.
    CACHE_MAX = 100_000

    def __init__(self, dim: int = HASH_DEFAULT_DIM) -> None:
        self.dim = dim
        self.model = f"feature-hash-{dim}"
        self._codes: dict[str, int] = {}

    def _code(self, feature: str) -> int:
        """The feature's slot times two, plus one when it counts -1 (the hash's top bit)."""
        value = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "little")
        code = (value % self.dim) * 2 + (((value >> 63) & 1) ^ 1)
        if len(self._codes) >= self.CACHE_MAX:
            self._codes.clear()
        self._codes[feature] = code
        return code

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        codes: list[int] = []
        counts: list[int] = []
        known = self._codes.get
        for text in texts:
            words = _TOKEN.findall(text.lower())
            features = words + [f"{a} {b}" for a, b in itertools.pairwise(words)]
            for feature in features:
                code = known(feature)
                codes.append(self._code(feature) if code is None else code)
            counts.append(len(features))
        # One pass of numpy for the whole batch: row offset + slot, weighted +-1, summed.
        code_array = np.asarray(codes, dtype=np.int64)
        rows = np.repeat(np.arange(len(texts), dtype=np.int64) * self.dim, counts)
        signs = 1.0 - 2.0 * (code_array & 1)
        sums = np.bincount(rows + (code_array >> 1), weights=signs, minlength=len(texts) * self.dim)
        matrix = sums.astype(np.float32).reshape(len(texts), self.dim)
        for i in np.flatnonzero(~matrix.any(axis=1)).tolist():
            # An empty or symbol-only text still gets a stable, non-zero vector.
            matrix[i][hash_bucket(texts[i], self.dim)] = 1.0
        return checked(self, normalise(matrix), len(texts))


def hash_bucket(text: str, dim: int) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little") % dim
