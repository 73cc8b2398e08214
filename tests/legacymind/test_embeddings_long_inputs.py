"""Texts over the ``openai`` model's input limit, and batches over its per-request total, against
the loopback OpenAI-wire server refusing them with OpenAI's own 400 answers: a refused batch is
split, a refused text is embedded from its beginning, and nothing else changes (order, the
stored text, errors that are not about length)."""

from __future__ import annotations

import numpy as np
import pytest

from legacymind.providers import embeddings
from legacymind.providers.embeddings import EmbeddingError, HashEmbedder, get_provider
from legacymind.vectors.reembed import rows_reembed
from tests.support.openai_server import use_openai_embeddings
from thoughts.models import Thought

DIM = 4


@pytest.fixture
def stub(settings, openai_stub):
    use_openai_embeddings(settings, openai_stub, dim=DIM)
    settings.EMBEDDING_RPS = 0.0
    embeddings._cached.cache_clear()
    yield openai_stub
    embeddings._cached.cache_clear()


def words(prefix: str, count: int) -> str:
    return " ".join(f"{prefix}{i}" for i in range(count))


def hashed(texts: list[str]) -> np.ndarray:
    """What the stub answers for ``texts`` (the hash embedder's unit vectors)."""
    return HashEmbedder(dim=DIM).embed(texts)


def accepted_inputs(stub) -> list[str]:
    """Every input of every request the stub answered with vectors, in order."""
    return [
        text
        for request in stub.requests
        if stub.too_many_tokens(request["body"]["input"]) is None
        for text in request["body"]["input"]
    ]


def test_a_text_over_the_input_limit_is_embedded_from_its_beginning(stub):
    stub.max_input_tokens = 50
    long = words("w", 200)
    texts = ["alpha beta", long, "gamma delta"]

    vectors = get_provider().embed(texts)

    kept = [text for text in accepted_inputs(stub) if text.startswith("w0 ")]
    assert len(kept) == 1, accepted_inputs(stub)
    assert long.startswith(kept[0]) and kept[0] != long
    # OpenAI named the share it takes (50 of 200 tokens): one shortening, most of what fits.
    assert 30 <= len(kept[0].split()) <= 50
    np.testing.assert_allclose(vectors, hashed(["alpha beta", kept[0], "gamma delta"]), atol=1e-6)


def test_a_batch_over_the_request_total_is_split_in_halves_and_keeps_its_order(stub):
    stub.max_request_tokens = 100
    texts = [words(f"t{n}x", 10) for n in range(30)]  # 300 tokens in all

    vectors = get_provider().embed(texts)

    np.testing.assert_allclose(vectors, hashed(texts), atol=1e-6)
    assert accepted_inputs(stub) == texts  # every text whole, each once
    sizes = [len(r["body"]["input"]) for r in stub.requests]
    assert sizes[:3] == [30, 15, 7]  # refused, then halves until 70 tokens fit


def test_a_refusal_that_is_not_about_tokens_fails_at_once(stub):
    stub.fail_next(400)  # "scripted 400": a bad request of another kind

    with pytest.raises(EmbeddingError, match="HTTP 400"):
        get_provider().embed(["alpha", "beta"])
    assert len(stub.requests) == 1


def test_a_text_refused_however_short_is_an_error_after_a_few_tries(stub):
    stub.max_input_tokens = 0  # refuses every word

    with pytest.raises(EmbeddingError, match="still refused"):
        get_provider().embed([words("z", 400)])
    # Each try keeps at most 90% of the last (no share named: half): a handful, not hundreds.
    assert 2 <= len(stub.requests) <= 12


@pytest.mark.django_db
def test_think_stores_a_thought_longer_than_the_model_takes_whole(api, stub):
    stub.max_input_tokens = 50
    content = words("idea", 3000)  # ~27 KB, well under the API's 100 KB

    r = api.post("/api/v1/think", {"content": content}, format="json")

    assert r.status_code == 201, r.json()
    thought_id = r.json()["delegated_result"]["thought_id"].removeprefix("thoughts:")
    thought = Thought.objects.get(pk=thought_id)
    assert thought.content == content  # only the embedding's input was shortened
    assert thought.embedding_dim == DIM and thought.embedding_provider == "openai"
    kept = accepted_inputs(stub)[-1]
    assert content.startswith(kept) and len(kept.split()) <= 50
    np.testing.assert_allclose(np.asarray(thought.embedding), hashed([kept])[0], atol=1e-6)


@pytest.mark.django_db(transaction=True)
def test_reembed_gets_past_a_long_row_instead_of_failing_at_its_batch(stub, user):
    stub.max_input_tokens = 50
    stub.max_request_tokens = 400
    rows = [Thought.objects.create(owner=user, content=words(f"n{i}x", 12)) for i in range(40)]
    long = Thought.objects.create(owner=user, content=words("long", 500))

    summary = rows_reembed(target="thoughts", batch_size=64)

    assert summary.rows == 41 and summary.remaining == 0
    for thought in [*rows, long]:
        thought.refresh_from_db()
        assert thought.embedding_provider == "openai" and thought.embedding_dim == DIM
    np.testing.assert_allclose(
        np.asarray(rows[0].embedding), hashed([rows[0].content])[0], atol=1e-6
    )
