"""The ``local`` model reads at most 256 word pieces of a text: a longer one is embedded in pieces
of whole words and its vector is their weighted mean, so its end counts as well as its
beginning. Real all-MiniLM-L6-v2 weights, offline."""

from __future__ import annotations

import numpy as np
import pytest

from legacymind.providers import embeddings
from legacymind.providers.embeddings import get_provider
from legacymind.providers.embeddings.local import _windows

CATS = "My cat sleeps on the warm windowsill every afternoon and purrs when the sun comes out. "
DATABASE = (
    "The Postgres schema migration failed at midnight and the on-call engineer rolled the "
    "deploy back. "
)


@pytest.fixture
def local(settings, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    settings.EMBEDDING_PROVIDER = "local"
    settings.EMBEDDING_DIM = 0
    embeddings._cached.cache_clear()
    yield get_provider()
    embeddings._cached.cache_clear()


def test_the_end_of_a_long_text_counts_as_well_as_its_beginning(local):
    beginning, end = CATS * 16, DATABASE * 14  # ~290 and ~330 word pieces
    about_the_end = "Last night's database migration broke and we rolled back the release."
    about_the_beginning = "A kitten naps in the sunshine by the window."

    whole, first, last, q_end, q_beginning = local.embed(
        [beginning + end, beginning, end, about_the_end, about_the_beginning]
    )

    assert np.isclose(np.linalg.norm(whole), 1.0, atol=1e-5)
    # Read up to its 256th word piece, the text was its beginning: the end found nothing.
    assert whole @ q_end > first @ q_end + 0.15
    assert whole @ q_beginning > last @ q_beginning + 0.15


def test_a_text_that_fits_gets_the_models_own_vector_beside_a_long_one(local):
    short = "A kitten was sitting on the rug."
    model = local._load()  # sentence-transformers itself, for the reference
    reference = model.encode([short], normalize_embeddings=True)[0]

    alone = local.embed([short])[0]
    beside = local.embed([short, CATS * 40])[0]

    np.testing.assert_allclose(alone, reference, atol=1e-6)
    np.testing.assert_allclose(beside, reference, atol=1e-5)  # padded in another batch


def _offsets(text: str) -> list[tuple[int, int]]:
    """Word pieces of ``text`` as the model's tokenizer cuts them (character spans)."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_str(
        embeddings.LocalEmbedder()._load().tokenizer.backend_tokenizer.to_str()
    )
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer.encode(text, add_special_tokens=False).offsets


def test_pieces_hold_every_word_once_in_order_and_no_more_than_the_window():
    text = " ".join(
        f"unbelievably{i} entangled, words" if i % 3 else f"plain{i}" for i in range(400)
    )
    offsets = _offsets(text)
    assert len(offsets) > 3 * 100

    pieces = _windows(offsets, 100)

    assert len(pieces) >= 4
    assert sum(count for _, _, count in pieces) == len(offsets)
    assert all(count <= 100 for _, _, count in pieces)
    assert " ".join(text[start:end] for start, end, _ in pieces).split() == text.split()
    assert all(text[end] == " " for _, end, _ in pieces[:-1])  # cut between words


def test_a_text_within_the_window_is_not_cut():
    text = "one two three four"
    assert _windows(_offsets(text), 100) == []
    assert _windows(_offsets(text), len(_offsets(text))) == []


def test_a_word_longer_than_half_a_window_is_cut_inside_rather_than_left_out():
    word = "supercalifragilistic" * 4  # one word of many word pieces (100 characters: [UNK])
    text = f"start {word} end"
    offsets = _offsets(text)
    assert len(offsets) > 2 * 8

    pieces = _windows(offsets, 8)

    assert len(pieces) >= 3 and all(count <= 8 for _, _, count in pieces)
    assert "".join(text[start:end] for start, end, _ in pieces).replace(" ", "") == text.replace(
        " ", ""
    )
