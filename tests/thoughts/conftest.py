"""Fixtures for the think pipeline: KG memories whose vectors have a chosen cosine to the hash
embedding of a given text, so thresholds can be tested exactly."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from django.utils import timezone

from kg.models import Entity, Observation
from kg.selectors import nearest as kg_search
from legacymind.providers.embeddings import HashEmbedder
from tests.thoughts.factories import EntityFactory, ObservationFactory

DIM = 384


def text_vector(text: str) -> np.ndarray:
    """The vector the hash provider gives ``text`` (the query vector of a think request)."""
    return HashEmbedder(dim=DIM).embed([text])[0].astype(np.float64)


def with_cosine(query: np.ndarray, cosine: float, seed: int) -> np.ndarray:
    """A unit vector whose cosine to ``query`` is exactly ``cosine``."""
    q = query / np.linalg.norm(query)
    noise = np.random.default_rng(seed).standard_normal(len(q))
    noise -= noise.dot(q) * q
    noise /= np.linalg.norm(noise)
    return (cosine * q + np.sqrt(max(0.0, 1 - cosine**2)) * noise).astype(np.float32)


def embedded(vector: np.ndarray) -> dict[str, Any]:
    return {
        "embedding": vector,
        "embedding_dim": len(vector),
        "embedding_provider": "hash",
        "embedding_model": f"feature-hash-{len(vector)}",
        "embedded_at": timezone.now(),
    }


@pytest.fixture(autouse=True)
def _fast_passwords(settings: Any) -> None:
    """The shared user fixtures hash a password each; PBKDF2 dominated these tests' setup."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _no_remembered_empty_kinds() -> None:
    """What one test's KG lacked (``kg_search._NONE_SEARCHABLE``) says nothing of the next's:
    each test rolls its rows back."""
    kg_search._NONE_SEARCHABLE.clear()


MemoryMaker = Callable[..., Entity | Observation]


@pytest.fixture
def memory(db: None) -> MemoryMaker:
    """``memory(about=text, cosine=0.7, kind="entity", **fields)``: a KG row at that cosine
    (``fields`` may override the embedding's provenance too)."""
    seeds = iter(range(1, 100_000))

    def make(*, about: str, cosine: float, kind: str = "entity", **fields: Any) -> Any:
        vector = with_cosine(text_vector(about), cosine, next(seeds))
        factory = EntityFactory if kind == "entity" else ObservationFactory
        return factory(**{**embedded(vector), **fields})

    return make
