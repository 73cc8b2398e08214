"""What every embedding provider shares: the protocol, the error, the checks a matrix passes
before it can be stored, and the provenance columns of an embedded row."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from django.utils import timezone

from legacymind.errors import Unavailable


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


def checked(provider: EmbeddingProvider, matrix: np.ndarray, count: int) -> np.ndarray:
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


def normalise(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms
