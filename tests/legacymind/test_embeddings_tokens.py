"""The local model's token reading (``LocalEmbedder.read_tokens``): the word pieces of a text
with their character spans, and the text's embedding from the same pass, which the next
``embed`` of that text reuses."""

from __future__ import annotations

import numpy as np
import pytest

from legacymind.providers.embeddings.local import RECENT, LocalEmbedder

ENTRY = "Sorted the spare room today. Found Dad's old radio - it still works!"


@pytest.fixture(scope="module")
def local() -> LocalEmbedder:
    return LocalEmbedder(coalesce=False)


def test_the_reading_gives_the_embedding_embed_gives(local: LocalEmbedder) -> None:
    reading = local.read_tokens([ENTRY, "a second, shorter text"])[0]
    fresh = LocalEmbedder(coalesce=False)
    fresh._model = local._load()  # the same weights, nothing remembered
    assert float(fresh.embed([ENTRY])[0] @ reading.vector) > 0.9999
    assert reading.tokens.shape == (len(reading.spans), 384)


def test_pieces_carry_the_characters_they_came_from(local: LocalEmbedder) -> None:
    reading = local.read_tokens([ENTRY], layers=(2, 6))[0]
    assert reading.tokens.shape[1] == 768
    words = {ENTRY[a:b].lower() for a, b in reading.spans}
    assert {"radio", "spare", "room", "!"} <= words
    assert all(0 <= a < b <= len(ENTRY) for a, b in reading.spans)


def test_a_text_over_the_models_input_is_read_to_its_end(local: LocalEmbedder) -> None:
    long = " ".join(f"Line {i} of a long entry." for i in range(150))  # ~900 pieces
    reading = local.read_tokens([long])[0]
    assert reading.spans[-1][1] == len(long)
    assert len(reading.spans) > 256


def test_embed_reuses_a_texts_reading_and_forgets_old_ones(local: LocalEmbedder) -> None:
    reading = local.read_tokens(["remember me"])[0]
    assert np.array_equal(local.embed(["remember me"])[0], reading.vector)
    local.read_tokens([f"filler {i}" for i in range(RECENT)])
    assert "remember me" not in local._recent
