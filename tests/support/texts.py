"""Per-test query texts whose embeddings are unrelated to every other test's."""

from __future__ import annotations

import hashlib
import re

_WORD = re.compile(r"[a-z0-9]+", re.IGNORECASE)


def of_its_own(text: str, test_name: str) -> str:
    """``text`` with every word tagged by the test's name.

    Rolled-back rows of earlier tests stay in the HNSW graph until a vacuum, and pgvector reads
    at most ``hnsw.ef_search`` index entries, dead ones included. Appending the test's name to
    a shared sentence still left two tests' hash vectors at cosine ~0.4, so an earlier test's
    rows at 0.9 to its own text sat at ~0.37 to this one, above rows placed at 0.16-0.24, and
    could fill all 40 slots of the first search (a CI failure: nothing injected). Tagged words
    share no feature with another test's, so the texts' vectors are practically orthogonal."""
    tag = hashlib.blake2b(test_name.encode(), digest_size=4).hexdigest()
    return _WORD.sub(lambda word: f"{word.group()}{tag}", text)
