"""Embedding providers: ``openai`` (any OpenAI-compatible server), ``local`` (all-MiniLM-L6-v2,
offline) and ``hash`` (deterministic feature hashing, for tests and tiny installs).

Services call :func:`get_provider` and then ``provider.embed(texts)``; nothing else talks to a
model. Every vector is checked (non-empty, finite, the provider's dimension) before it can be
stored, and :func:`fields_for` gives the provenance columns every embedded row records.
"""

from __future__ import annotations

import logging
import time
from functools import lru_cache

from django.conf import settings

from legacymind.providers.embeddings.base import (
    EmbeddingError,
    EmbeddingProvider,
    Provenance,
    fields_for,
    provenance,
)
from legacymind.providers.embeddings.hashing import HASH_DEFAULT_DIM, HashEmbedder, hash_bucket
from legacymind.providers.embeddings.local import LOCAL_DIM, LocalEmbedder
from legacymind.providers.embeddings.openai_api import OPENAI_DEFAULT_MODEL, OpenAIEmbedder

# What the rest of the project imports from here (each provider lives in its own module).
__all__ = [
    "EmbeddingError",
    "EmbeddingProvider",
    "HashEmbedder",
    "Provenance",
    "build_provider",
    "fields_for",
    "get_provider",
    "hash_bucket",
    "local_provider",
    "provenance",
    "warm_up",
]

logger = logging.getLogger("legacymind.embeddings")


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
        return LocalEmbedder(
            batch_size=settings.EMBEDDING_BATCH_SIZE, coalesce=settings.EMBEDDING_COALESCE
        )
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
            rps=settings.EMBEDDING_RPS,
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
        settings.EMBEDDING_COALESCE,
        settings.OPENAI_API_KEY,
        settings.OPENAI_BASE_URL,
        settings.EMBEDDING_TIMEOUT,
        settings.EMBEDDING_MAX_RETRIES,
        settings.EMBEDDING_RPS,
    )


def local_provider() -> LocalEmbedder:
    """The local sentence model, whatever ``EMBEDDING_PROVIDER`` is: readers that judge meaning
    (the distress detector) need it even where rows are embedded by hash or a remote model. The
    configured provider is reused when it is the local one, so the model loads once."""
    provider = get_provider()
    if isinstance(provider, LocalEmbedder):
        return provider
    return _local(settings.EMBEDDING_BATCH_SIZE, settings.EMBEDDING_COALESCE)


@lru_cache(maxsize=2)
def _local(batch_size: int, coalesce: bool) -> LocalEmbedder:
    # Built directly, not by build_provider: EMBEDDING_DIM describes the configured provider.
    return LocalEmbedder(batch_size=batch_size, coalesce=coalesce)


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
