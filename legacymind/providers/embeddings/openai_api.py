"""``openai``: the OpenAI embeddings API through the ``openai`` SDK, or any server that speaks
its wire format (``OPENAI_BASE_URL``)."""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from legacymind.providers.embeddings.base import EmbeddingError, checked, normalise

logger = logging.getLogger("legacymind.embeddings")

OPENAI_DEFAULT_MODEL = "text-embedding-3-small"
OPENAI_DEFAULT_DIMS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
OPENAI_MAX_BATCH = 2048
# OpenAI's answer to an input over the model's limit (8,192 tokens for text-embedding-3-*):
# "This model's maximum context length is 8192 tokens, however you requested 51435 tokens ...".
# Any 400 that speaks of tokens is taken for "too long": other OpenAI-compatible servers word it
# otherwise, and a request over the per-request total (300,000 tokens) says tokens too.
_TOO_LONG = re.compile(r"token", re.IGNORECASE)
_LIMIT = re.compile(r"maximum context length is (\d+) tokens, however you requested (\d+) tokens")
MIN_SHORTENED_CHARS = 64  # below this, shortening further would embed nothing worth having


class _TooLong(EmbeddingError):
    """A request the server refused as too many tokens; ``fraction`` is how much of the longest
    input it would take, when the answer says (OpenAI's wording), else None."""

    def __init__(self, detail: str, fraction: float | None) -> None:
        super().__init__(detail)
        self.fraction = fraction


class OpenAIEmbedder:
    """The OpenAI embeddings API, or any server that speaks its wire format (``OPENAI_BASE_URL``).

    Retries 429, 5xx, timeouts and connection errors with exponential backoff (2^n x 200 ms);
    other errors (bad key, bad request) fail at once. ``EMBEDDING_RPS`` spaces requests out.

    A thought may hold 100 KB, several times the model's input limit, and a batch of long texts
    may pass the per-request total: a request refused for its tokens is split in halves, and a
    single text still refused is shortened (its vector is that of its beginning; the stored
    text is untouched) until the server takes it. Before, one such text failed its think with
    a 503, and failed every ``reembed`` at the same batch.
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

    @staticmethod
    def _too_long(exc: Exception) -> bool:
        import openai

        return isinstance(exc, openai.BadRequestError) and bool(_TOO_LONG.search(exc.message))

    @staticmethod
    def _fraction(exc: Exception) -> float | None:
        found = _LIMIT.search(getattr(exc, "message", ""))
        if not found or int(found.group(2)) <= 0:
            return None
        return int(found.group(1)) / int(found.group(2))

    def _fitting(self, batch: list[str]) -> np.ndarray:
        """``batch``'s vectors, split and shortened until the server takes every request."""
        try:
            return self._request(batch)
        except _TooLong as exc:
            if len(batch) > 1:
                half = len(batch) // 2
                return np.vstack([self._fitting(batch[:half]), self._fitting(batch[half:])])
            text = batch[0]
            # Characters are not tokens: aim a tenth under the share the server named.
            keep = int(len(text) * min((exc.fraction or 0.5) * 0.9, 0.9))
            if keep < MIN_SHORTENED_CHARS:
                raise EmbeddingError(
                    f"openai embeddings failed ({self.model}): {exc.detail} (the text was "
                    f"shortened to {len(text)} characters and still refused)"
                ) from exc
            # Lengths only: the text may be a private thought or an inner-voice question.
            logger.warning("embed.input_shortened chars=%d kept=%d", len(text), keep)
            return self._fitting([text[:keep]])

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
                if self._too_long(exc):
                    raise _TooLong(self._describe(exc), self._fraction(exc)) from exc
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
                self._fitting(list(texts[i : i + self.batch_size]))
                for i in range(0, len(texts), self.batch_size)
            ]
        )
        return checked(self, normalise(matrix), len(texts))
