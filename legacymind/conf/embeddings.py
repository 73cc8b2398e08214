"""Embedding settings (the providers in ``legacymind.providers.embeddings``, the vector indexes
and re-embedding), read from the environment (listed in .env.example); star-imported by the
settings."""

from __future__ import annotations

import re

from django.core.exceptions import ImproperlyConfigured

from legacymind.conf.env import env, env_choice, env_float, env_int

OPENAI_API_KEY = env.str("OPENAI_API_KEY", default="")
OPENAI_BASE_URL = env.str("OPENAI_BASE_URL", default="").strip() or None
if OPENAI_BASE_URL and not re.fullmatch(r"https?://[^\s/]+(/\S*)?", OPENAI_BASE_URL):
    # Else every embedding would fail with the SDK's "Connection error", naming nothing.
    raise ImproperlyConfigured(
        f"OPENAI_BASE_URL={OPENAI_BASE_URL!r} is not an http(s) URL, e.g. https://api.openai.com/v1"
    )
EMBEDDING_PROVIDER = env_choice(
    "EMBEDDING_PROVIDER", "openai" if OPENAI_API_KEY else "local", ("openai", "local", "hash")
)
if EMBEDDING_PROVIDER == "openai" and not OPENAI_API_KEY:
    raise ImproperlyConfigured("EMBEDDING_PROVIDER=openai needs OPENAI_API_KEY")
EMBEDDING_MODEL = env.str("EMBEDDING_MODEL", default="")
EMBEDDING_DIM = env_int("EMBEDDING_DIM", 0, low=0, high=16000)  # 0: the model's own size
if EMBEDDING_PROVIDER == "local" and EMBEDDING_DIM not in (0, 384):
    # The local model's size is fixed (LOCAL_DIM, providers/embeddings/local.py); found only at the
    # first embedding, the mismatch made every request that embeds answer 503.
    raise ImproperlyConfigured(
        f"EMBEDDING_DIM={EMBEDDING_DIM} but the local model is 384-d: unset it or set 384"
    )
EMBEDDING_BATCH_SIZE = env_int("EMBEDDING_BATCH_SIZE", 64, low=1, high=2048)
# The local model embeds single texts that threads send at the same moment as one batch
# (legacymind/providers/embeddings/coalesce.py); 0 embeds each on its own.
EMBEDDING_COALESCE = env.bool("EMBEDDING_COALESCE", default=True)
EMBEDDING_TIMEOUT = env_float("EMBEDDING_TIMEOUT", 30.0, low=0.1, high=600)
EMBEDDING_MAX_RETRIES = env_int("EMBEDDING_MAX_RETRIES", 4, low=0, high=10)
EMBEDDING_RPS = env_float("EMBEDDING_RPS", 0.0, low=0.0, high=10000)  # 0: no limit
# Dimensions that get a partial HNSW index; vectors of other sizes are stored but searched exactly.
VECTOR_INDEXED_DIMS = (384, 1536)
# A re-embed writing at least this many rows, and at least half of a table, drops that table's
# HNSW index and builds it again at the end (legacymind/vector_indexes.py).
REEMBED_INDEX_REBUILD_MIN_ROWS = env_int(
    "REEMBED_INDEX_REBUILD_MIN_ROWS", 500, low=1, high=1_000_000_000
)
