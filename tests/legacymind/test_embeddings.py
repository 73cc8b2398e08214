"""Embedding providers: ``openai`` against a real HTTP server on 127.0.0.1 speaking the wire
format, ``local`` with the real all-MiniLM-L6-v2 weights offline, and ``hash``."""

from __future__ import annotations

import hashlib
import math
import os
import re
import socket
import subprocess
import sys
import threading
import time
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest

from legacymind.providers import embeddings
from legacymind.providers.embeddings import EmbeddingError, get_provider

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def openai_settings(settings, openai_stub):
    settings.EMBEDDING_PROVIDER = "openai"
    settings.OPENAI_API_KEY = "sk-test"
    settings.OPENAI_BASE_URL = openai_stub.base_url
    settings.EMBEDDING_MODEL = ""
    settings.EMBEDDING_DIM = 4
    settings.EMBEDDING_TIMEOUT = 5.0
    settings.EMBEDDING_MAX_RETRIES = 4
    settings.EMBEDDING_RPS = 0.0
    openai_stub.embed_fn = lambda texts: [[1.0, 2.0, 0.0, 0.0] for _ in texts]
    return settings


def _angle_vectors(texts):
    """Vector i points at angle i (radians) in the first plane: order is checkable."""
    return [[math.cos(int(t)), math.sin(int(t)), 0.0, 0.0] for t in texts]


# --- openai --------------------------------------------------------------------------------
def test_openai_splits_large_inputs_into_batches_of_at_most_2048_in_order(
    openai_settings, openai_stub
):
    openai_stub.embed_fn = _angle_vectors
    texts = [str(i) for i in range(4100)]

    matrix = get_provider().embed(texts)

    sizes = [len(r["body"]["input"]) for r in openai_stub.requests]
    assert sizes == [2048, 2048, 4]
    assert matrix.shape == (4100, 4)
    assert matrix.dtype == np.float32
    expected = np.array(_angle_vectors(texts), dtype=np.float32)
    assert np.allclose(matrix, expected, atol=1e-6)
    assert openai_stub.requests[0]["auth"] == "Bearer sk-test"


@pytest.mark.parametrize("answer_format", [None, "float"])
def test_openai_reads_base64_answers_and_servers_that_answer_floats_anyway(
    openai_settings, openai_stub, answer_format
):
    # The SDK asks for base64 (a quarter of the JSON, no float parsing); some OpenAI-compatible
    # servers answer lists of floats whatever was asked. Both give the same rows.
    openai_stub.embed_fn = _angle_vectors
    openai_stub.answer_format = answer_format
    texts = [str(i) for i in range(5)]

    matrix = get_provider().embed(texts)

    assert openai_stub.requests[0]["body"]["encoding_format"] == "base64"
    assert matrix.dtype == np.float32
    assert np.allclose(matrix, np.array(_angle_vectors(texts), dtype=np.float32), atol=1e-6)


def test_openai_sends_dimensions_and_default_model_when_embedding_dim_is_set(
    openai_settings, openai_stub
):
    provider = get_provider()
    matrix = provider.embed(["hello"])

    body = openai_stub.requests[0]["body"]
    assert body["model"] == "text-embedding-3-small"
    assert body["dimensions"] == 4
    assert (provider.name, provider.model, provider.dim) == ("openai", "text-embedding-3-small", 4)
    assert np.allclose(np.linalg.norm(matrix, axis=1), 1.0)


def test_openai_omits_dimensions_without_embedding_dim_and_uses_the_models_size(
    openai_settings, openai_stub
):
    openai_settings.EMBEDDING_DIM = 0
    openai_stub.embed_fn = lambda texts: [[0.5] * 1536 for _ in texts]

    provider = get_provider()
    matrix = provider.embed(["a", "b"])

    assert "dimensions" not in openai_stub.requests[0]["body"]
    assert provider.dim == 1536
    assert matrix.shape == (2, 1536)


def test_openai_retries_a_429_after_200ms_then_succeeds(openai_settings, openai_stub):
    openai_stub.fail_next(429)

    matrix = get_provider().embed(["x"])

    assert len(openai_stub.requests) == 2
    gap = openai_stub.requests[1]["at"] - openai_stub.requests[0]["at"]
    assert 0.18 <= gap < 1.0
    assert matrix.shape == (1, 4)


def test_openai_backoff_doubles_from_200ms_on_5xx(openai_settings, openai_stub):
    openai_stub.fail_next(503, times=3)

    get_provider().embed(["x"])

    at = [r["at"] for r in openai_stub.requests]
    gaps = [b - a for a, b in pairwise(at)]
    assert len(at) == 4
    for gap, expected in zip(gaps, (0.2, 0.4, 0.8), strict=True):
        assert expected * 0.9 <= gap < expected + 0.5


def test_openai_permanent_failure_gives_a_clear_error_after_the_last_try(
    openai_settings, openai_stub
):
    openai_settings.EMBEDDING_MAX_RETRIES = 2
    openai_stub.fail_next(500, times=10)

    with pytest.raises(EmbeddingError) as excinfo:
        get_provider().embed(["x"])

    assert len(openai_stub.requests) == 3
    detail = excinfo.value.detail
    assert "openai" in detail
    assert "after 3 attempts" in detail
    assert "HTTP 500" in detail
    assert openai_stub.base_url in detail
    assert excinfo.value.error_code == "embedding_unavailable"
    assert excinfo.value.status_code == 503


def test_openai_does_not_retry_a_client_error(openai_settings, openai_stub):
    openai_stub.fail_next(401)

    with pytest.raises(EmbeddingError, match="HTTP 401"):
        get_provider().embed(["x"])

    assert len(openai_stub.requests) == 1


def test_openai_retries_connection_errors_then_names_the_server(openai_settings):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    openai_settings.OPENAI_BASE_URL = f"http://127.0.0.1:{port}/v1"  # nothing listens
    openai_settings.EMBEDDING_MAX_RETRIES = 2

    started = time.monotonic()
    with pytest.raises(EmbeddingError) as excinfo:
        get_provider().embed(["x"])

    assert time.monotonic() - started >= 0.2 + 0.4 - 0.05
    assert "after 3 attempts" in excinfo.value.detail
    assert f"127.0.0.1:{port}" in excinfo.value.detail


def test_openai_rejects_an_empty_vector(openai_settings, openai_stub):
    openai_stub.embed_fn = lambda texts: [[] for _ in texts]

    with pytest.raises(EmbeddingError, match="empty vector"):
        get_provider().embed(["x"])


def test_openai_rejects_a_dimension_mismatch(openai_settings, openai_stub):
    openai_stub.embed_fn = lambda texts: [[1.0, 0.0, 0.0] for _ in texts]

    with pytest.raises(EmbeddingError, match=r"3-d vectors, expected 4-d"):
        get_provider().embed(["x", "y"])


def test_openai_rejects_ragged_vectors(openai_settings, openai_stub):
    openai_stub.embed_fn = lambda texts: [[1.0] * (4 - i % 2) for i, _ in enumerate(texts)]

    with pytest.raises(EmbeddingError, match="expected 4-d"):
        get_provider().embed(["x", "y"])


def test_openai_rejects_fewer_vectors_than_texts(openai_settings, openai_stub):
    openai_stub.embed_fn = lambda texts: [[1.0, 0.0, 0.0, 0.0]]

    with pytest.raises(EmbeddingError, match="1 vectors for 3 texts"):
        get_provider().embed(["x", "y", "z"])


def test_openai_spaces_requests_by_surr_embed_rps(openai_settings, openai_stub):
    openai_settings.EMBEDDING_RPS = 10.0
    provider = get_provider()

    started = time.monotonic()
    for text in ("a", "b", "c", "d"):
        provider.embed([text])

    assert time.monotonic() - started >= 0.3 - 0.005
    at = [r["at"] for r in openai_stub.requests]
    assert len(at) == 4
    # The limiter spaces the sends 100 ms apart; arrival times jitter by a few ms around that.
    assert all(b - a >= 0.07 for a, b in pairwise(at))


def test_openai_provider_needs_an_api_key(settings):
    settings.EMBEDDING_PROVIDER = "openai"
    settings.OPENAI_API_KEY = ""

    with pytest.raises(EmbeddingError, match="OPENAI_API_KEY"):
        get_provider()


# --- local ---------------------------------------------------------------------------------
def test_local_gives_384d_unit_vectors_where_related_sentences_score_higher(settings, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    settings.EMBEDDING_PROVIDER = "local"

    provider = get_provider()
    matrix = provider.embed(
        [
            "The cat sat on the mat.",
            "A kitten was sitting on the rug.",
            "Quarterly revenue grew by eight percent.",
            "The database migration failed at midnight.",
            "Last night's schema migration on Postgres broke.",
        ]
    )

    assert (provider.name, provider.model, provider.dim) == ("local", "all-MiniLM-L6-v2", 384)
    assert matrix.shape == (5, 384)
    assert np.allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-5)
    sims = matrix @ matrix.T
    assert sims[0, 1] > sims[0, 2] + 0.3
    assert sims[3, 4] > sims[3, 2] + 0.3
    assert sims[0, 1] > sims[0, 3]
    assert get_provider() is provider  # loaded once per process


def test_local_embeds_from_several_threads_at_once_as_it_does_alone(settings, monkeypatch):
    # gunicorn's threaded workers call one process's model from several threads; texts long
    # enough to be truncated exercise the tokenizer's shared settings too.
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    settings.EMBEDDING_PROVIDER = "local"
    provider = get_provider()
    texts = [f"thread {k} writes about topic {k} " * (1 + 40 * k) for k in range(6)]
    alone = provider.embed(texts)
    together: dict[int, np.ndarray] = {}
    errors: list[BaseException] = []

    def embed(k: int) -> None:
        try:
            for _ in range(3):
                together[k] = provider.embed([texts[k]])[0]
        except BaseException as exc:  # reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=embed, args=(k,)) for k in range(len(texts))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)

    assert errors == []
    for k in range(len(texts)):
        assert np.allclose(together[k], alone[k], atol=1e-5)


def test_local_refuses_another_embedding_dim(settings):
    settings.EMBEDDING_PROVIDER = "local"
    settings.EMBEDDING_DIM = 1536

    with pytest.raises(EmbeddingError, match="384-d"):
        get_provider()


# --- hash ----------------------------------------------------------------------------------
def test_hash_is_deterministic_normalised_and_its_dimension_configurable(settings):
    settings.EMBEDDING_DIM = 64
    provider = get_provider()

    first = provider.embed(["the quick brown fox", "", "!!!"])
    again = embeddings.HashEmbedder(dim=64).embed(["the quick brown fox", "", "!!!"])

    assert (provider.name, provider.model, provider.dim) == ("hash", "feature-hash-64", 64)
    assert first.shape == (3, 64)
    assert np.array_equal(first, again)
    assert np.allclose(np.linalg.norm(first, axis=1), 1.0)
    related, unrelated = provider.embed(["the quick brown dog", "tax invoice overdue"])
    assert first[0] @ related > first[0] @ unrelated


def test_hash_default_dimension_is_384(settings):
    assert get_provider().dim == 384


def test_hash_vectors_are_the_same_in_another_process():
    code = (
        "from legacymind.providers.embeddings import HashEmbedder;"
        "print(HashEmbedder(dim=32).embed(['memory of thinking']).round(6).tolist())"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    here = embeddings.HashEmbedder(dim=32).embed(["memory of thinking"]).round(6).tolist()
    assert out.stdout.strip() == str(here)


def _hashed(text: str, dim: int) -> np.ndarray:
    """The hash provider's definition, feature by feature: vectors already stored under
    ``feature-hash-<dim>`` stay comparable only while it holds."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    out = np.zeros(dim)
    for feature in words + [f"{a} {b}" for a, b in pairwise(words)]:
        value = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "little")
        out[value % dim] += 1.0 if value >> 63 else -1.0
    if not out.any():  # no features, or features that cancel out
        out[embeddings.hash_bucket(text, dim)] = 1.0
    return out / np.linalg.norm(out)


HASH_TEXTS = [
    "The quick brown fox jumps over the lazy dog, the quick one",
    "",
    "!!! ???",
    "Ünïcödé Straße 東京 2026",
    "memory memory memory of thinking",
    "word " * 400,
]


@pytest.mark.parametrize("dim", [384, 7, 1536])
def test_hash_vectors_follow_the_feature_hashing_definition_in_any_batch(dim):
    provider = embeddings.HashEmbedder(dim=dim)
    expected = np.array([_hashed(text, dim) for text in HASH_TEXTS])

    batch = provider.embed(HASH_TEXTS)  # first sight of every feature
    again = provider.embed(HASH_TEXTS[::-1])[::-1]  # every feature remembered, other order
    one_by_one = np.vstack([provider.embed([text]) for text in HASH_TEXTS])

    assert batch.dtype == np.float32 and batch.shape == (len(HASH_TEXTS), dim)
    assert np.allclose(batch, expected, atol=1e-6)
    assert np.array_equal(batch, again)
    assert np.array_equal(batch, one_by_one)
    assert provider.embed([]).shape == (0, dim)


def test_hash_feature_memory_stays_bounded_and_changes_no_vector():
    provider = embeddings.HashEmbedder(dim=64)
    provider.CACHE_MAX = 5
    texts = [f"alpha beta gamma {i} delta epsilon" for i in range(20)]

    vectors = provider.embed(texts)

    assert len(provider._codes) <= 5
    assert np.allclose(vectors, [_hashed(text, 64) for text in texts], atol=1e-6)


# --- choice ---------------------------------------------------------------------------------
def _configured_provider(**env: str) -> str:
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in ("EMBEDDING_PROVIDER", "OPENAI_API_KEY", "EMBEDDING_DIM")
    }
    code = "from django.conf import settings; print(settings.EMBEDDING_PROVIDER)"
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**clean, "DJANGO_SETTINGS_MODULE": "legacymind.settings", **env},
        capture_output=True,
        text=True,
    )
    return out.stdout.strip() or out.stderr.strip().splitlines()[-1]


def test_default_provider_is_openai_with_a_key_else_local():
    assert _configured_provider(OPENAI_API_KEY="sk-anything") == "openai"
    assert _configured_provider() == "local"
    assert _configured_provider(EMBEDDING_PROVIDER="hash", OPENAI_API_KEY="sk-x") == "hash"


def test_unknown_provider_fails_at_start_up_naming_the_variable():
    assert "EMBEDDING_PROVIDER" in _configured_provider(EMBEDDING_PROVIDER="word2vec")
