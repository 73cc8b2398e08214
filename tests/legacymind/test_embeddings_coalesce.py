"""Single texts embedded at the same moment from several threads go to the model as one batch
(``legacymind.providers.embeddings.coalesce``): each thread gets its own text's vector, an error
reaches every thread of its batch and no other, and a text alone goes straight through. The
batches are the hash embedder's (real vectors, deterministic); the local model is checked too."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import numpy as np
import pytest

from legacymind.providers import embeddings
from legacymind.providers.embeddings import EmbeddingError, HashEmbedder, get_provider
from legacymind.providers.embeddings.coalesce import Coalescer

HASH = HashEmbedder(dim=16)


class SlowModel:
    """The hash embedder, taking ``seconds`` a call (so threads queue behind a batch) and
    remembering each call's texts; ``fail`` makes the calls whose texts include it raise."""

    def __init__(self, seconds: float = 0.05, fail: str | None = None) -> None:
        self.seconds, self.fail = seconds, fail
        self.calls: list[list[str]] = []

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        time.sleep(self.seconds)
        if self.fail in texts:
            raise EmbeddingError("the model failed")
        if "ctrl-c" in texts:
            raise KeyboardInterrupt
        return HASH.embed(texts)


def _from_threads(one: Callable[[str], np.ndarray], texts: list[str]) -> dict[str, object]:
    """Each text embedded by its own thread, all started together: vector or error by text."""
    out: dict[str, object] = {}
    start = threading.Barrier(len(texts))

    def run(text: str) -> None:
        start.wait()
        try:
            out[text] = one(text)
        except BaseException as exc:  # what the thread's caller would see
            out[text] = exc

    threads = [threading.Thread(target=run, args=(text,)) for text in texts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert not any(thread.is_alive() for thread in threads)
    return out


def test_threads_embedding_at_once_share_batches_and_each_gets_its_own_vector():
    model = SlowModel()
    texts = [f"thought number {i} about topic {i % 5}" for i in range(24)]

    out = _from_threads(Coalescer(model, max_batch=64).one, texts)

    for text in texts:
        np.testing.assert_allclose(out[text], HASH.embed([text])[0])
    assert sorted(t for call in model.calls for t in call) == sorted(texts)  # each once
    assert len(model.calls) < len(texts) / 2  # batches, not one call a text
    assert max(len(call) for call in model.calls) > 1


def test_a_batch_never_holds_more_than_max_batch_texts():
    model = SlowModel()
    texts = [f"text {i}" for i in range(20)]

    out = _from_threads(Coalescer(model, max_batch=3).one, texts)

    assert all(len(call) <= 3 for call in model.calls)
    assert sorted(t for call in model.calls for t in call) == sorted(texts)
    for text in texts:
        np.testing.assert_allclose(out[text], HASH.embed([text])[0])


def test_an_error_reaches_the_threads_of_its_batch_and_the_next_batch_still_works():
    model = SlowModel(fail="broken")
    coalescer = Coalescer(model, max_batch=64)
    texts = ["broken", *(f"text {i}" for i in range(11))]

    out = _from_threads(coalescer.one, texts)

    failed_call = next(call for call in model.calls if "broken" in call)
    for text in texts:
        if text in failed_call:
            assert isinstance(out[text], EmbeddingError)
        else:
            np.testing.assert_allclose(out[text], HASH.embed([text])[0])
    np.testing.assert_allclose(coalescer.one("after"), HASH.embed(["after"])[0])


def test_ctrl_c_during_a_batch_stops_the_thread_running_it_and_fails_the_others_cleanly():
    model = SlowModel()
    coalescer = Coalescer(model, max_batch=64)
    texts = ["ctrl-c", *(f"text {i}" for i in range(7))]

    out = _from_threads(coalescer.one, texts)

    stopped = next(call for call in model.calls if "ctrl-c" in call)
    outcomes = [out[text] for text in stopped]
    assert sum(isinstance(o, KeyboardInterrupt) for o in outcomes) == 1  # the one running it
    others = [o for o in outcomes if not isinstance(o, KeyboardInterrupt)]
    assert all(isinstance(o, EmbeddingError) and "interrupted" in str(o) for o in others)
    np.testing.assert_allclose(coalescer.one("after"), HASH.embed(["after"])[0])


def test_a_model_answering_too_few_rows_is_an_error_not_a_hang():
    coalescer = Coalescer(lambda texts: HASH.embed(texts[:-1]), max_batch=64)

    with pytest.raises(EmbeddingError, match="0 vectors came back for 1 texts"):
        coalescer.one("alone")
    np.testing.assert_allclose(
        Coalescer(HASH.embed, max_batch=64).one("fine"), HASH.embed(["fine"])[0]
    )


def test_a_text_alone_goes_straight_to_the_model():
    model = SlowModel(seconds=0)
    coalescer = Coalescer(model, max_batch=64)

    for text in ("one", "two", "three"):
        np.testing.assert_allclose(coalescer.one(text), HASH.embed([text])[0])

    assert model.calls == [["one"], ["two"], ["three"]]


@pytest.fixture
def local(settings, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    settings.EMBEDDING_PROVIDER = "local"
    settings.EMBEDDING_DIM = 0
    embeddings._cached.cache_clear()
    yield settings
    embeddings._cached.cache_clear()


def test_the_local_model_coalesces_by_default_and_not_with_embedding_coalesce_off(local):
    assert get_provider().coalescer is not None
    local.EMBEDDING_COALESCE = False
    assert get_provider().coalescer is None


def test_the_local_model_gives_each_thread_the_vector_it_gives_a_text_alone(local):
    provider = get_provider()
    texts = [f"journal entry {i}: the migration failed and I learned {i} things" for i in range(12)]
    alone = {text: provider.embed([text])[0] for text in texts}

    out = _from_threads(lambda text: provider.embed([text])[0], texts)

    for text in texts:
        np.testing.assert_allclose(out[text], alone[text], atol=1e-5)
        assert np.isclose(np.linalg.norm(out[text]), 1.0, atol=1e-5)
