"""Settings of the `thoughts` app, read from the environment (listed in .env.example).

Defaults follow specs/002 and the decisions in specs/README.md: the injection thresholds are the
original code's (t1 0.60, t2 0.40, t3 0.25, floor 0.15), so a higher scale injects more and
looser memories.
"""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured

from legacymind.conf.env import env, env_bool, env_choice, env_float, env_int  # noqa: F401


def _word_list(name: str, default: list[str]) -> list[str]:
    items = [item.strip().lower() for item in env.list(name, default=default)]
    items = [item for item in items if item]
    if not items:
        raise ImproperlyConfigured(f"{name} must list at least one item (comma separated)")
    return items


# Tags a thought may carry; others are dropped and reported in the response telemetry.
THINK_TAG_WHITELIST = _word_list(
    "THINK_TAG_WHITELIST", ["plan", "debug", "dx", "photography", "idea"]
)

# --- Memory injection ----------------------------------------------------------------------
# Similarity thresholds per injection scale (1: 5 memories, 2: 10, 3: 20), and the floor used
# when nothing passes the scale's threshold.
THINK_INJECT_T1 = env_float("THINK_INJECT_T1", 0.60, low=0.0, high=1.0)
THINK_INJECT_T2 = env_float("THINK_INJECT_T2", 0.40, low=0.0, high=1.0)
THINK_INJECT_T3 = env_float("THINK_INJECT_T3", 0.25, low=0.0, high=1.0)
THINK_INJECT_FLOOR = env_float("THINK_INJECT_FLOOR", 0.15, low=0.0, high=1.0)
# Nearest neighbours the HNSW index returns per KG table before thresholds and re-ranking.
# Each think mode has its own pool (the original's per-tool runtime defaults, which overrode
# KG_CANDIDATES there, so that setting did nothing for think). Here KG_CANDIDATES,
# when set, is the pool of every mode whose own variable is not set. pgvector's
# hnsw.ef_search tops out at 1000, hence the cap.
KG_CANDIDATES = env_int("KG_CANDIDATES", 500, low=1, high=1000)
_GENERAL_POOL_SET = bool(env.str("KG_CANDIDATES", default="").strip())


def _mode_pool(name: str, default: int) -> int:
    return env_int(name, KG_CANDIDATES if _GENERAL_POOL_SET else default, low=1, high=1000)


KG_CANDIDATES_THINK_CONVO = _mode_pool("KG_CANDIDATES_THINK_CONVO", 500)
KG_CANDIDATES_THINK_PLAN = _mode_pool("KG_CANDIDATES_THINK_PLAN", 800)
KG_CANDIDATES_THINK_DEBUG = _mode_pool("KG_CANDIDATES_THINK_DEBUG", 1000)
KG_CANDIDATES_THINK_BUILD = _mode_pool("KG_CANDIDATES_THINK_BUILD", 400)
KG_CANDIDATES_THINK_STUCK = _mode_pool("KG_CANDIDATES_THINK_STUCK", 600)
# Lowest hnsw.ef_search for injection and verification searches. The search starts at 40
# neighbours and widens (up to the pool) only while rows still pass the threshold; 0 means the
# connection's HNSW_EF_SEARCH. When the two are equal (the defaults) the first search sets
# nothing. Higher trades speed for recall: at 100k entities the injection step's recall@k was
# 0.955 with 120, 0.962 with 160 and 0.969 with 200 on one graph (p50 12.9, 16.2, 17.4 ms);
# with 120, fresh graphs gave 0.941-0.952 through the API, too close to the 0.95 target
# (docs/benchmarks.md, "Think").
THINK_INJECT_EF_SEARCH = env_int("THINK_INJECT_EF_SEARCH", 160, low=0, high=1000)
# Apply the submode profile's threshold delta (sarcastic -0.05, empathetic +0.02).
THINK_SUBMODE_RETRIEVAL = env_bool("THINK_SUBMODE_RETRIEVAL", False)
# Access bumps of injected memories (with Redis): seconds a flush waits so that the bumps of
# the thinks meanwhile go in one UPDATE, and how long it waits for a row another transaction
# has locked before it gives up and leaves them queued for the next flush.
KG_TOUCH_FLUSH_SECONDS = env_float("KG_TOUCH_FLUSH_SECONDS", 1.0, low=0.0, high=60.0)
KG_TOUCH_LOCK_MS = env_int("KG_TOUCH_LOCK_MS", 2000, low=1, high=600_000)
# KG rows without a vector that one think request embeds (and saves) on the way.
THINK_INJECT_BACKFILL_MAX = env_int("THINK_INJECT_BACKFILL_MAX", 32, low=0, high=2048)

# Orbital relevance: how injected memories are ranked once they pass the threshold.
# score = w_similarity*similarity + w_recency*recency + w_significance*significance
#         + w_access*access, where recency = 0.5 ** (days since last use / half-life) and
# access = log(1 + access_count) / log(1 + saturation), capped at 1.
THINK_ORBITAL_W_SIMILARITY = env_float("THINK_ORBITAL_W_SIMILARITY", 0.60, low=0.0, high=10.0)
THINK_ORBITAL_W_RECENCY = env_float("THINK_ORBITAL_W_RECENCY", 0.15, low=0.0, high=10.0)
THINK_ORBITAL_W_SIGNIFICANCE = env_float("THINK_ORBITAL_W_SIGNIFICANCE", 0.15, low=0.0, high=10.0)
THINK_ORBITAL_W_ACCESS = env_float("THINK_ORBITAL_W_ACCESS", 0.10, low=0.0, high=10.0)
THINK_ORBITAL_HALF_LIFE_DAYS = env_float("THINK_ORBITAL_HALF_LIFE_DAYS", 30.0, low=0.01, high=36500)
THINK_ORBITAL_ACCESS_SATURATION = env_int("THINK_ORBITAL_ACCESS_SATURATION", 50, low=1, high=10**6)

# --- Hypothesis verification ---------------------------------------------------------------
# Defaults for the request's verify_top_k, min_similarity and evidence_limit.
THINK_VERIFY_TOPK = env_int("THINK_VERIFY_TOPK", 50, low=1, high=500)
THINK_VERIFY_MIN_SIM = env_float("THINK_VERIFY_MIN_SIM", 0.60, low=0.0, high=1.0)
THINK_VERIFY_EVIDENCE_LIMIT = env_int("THINK_VERIFY_EVIDENCE_LIMIT", 10, low=1, high=25)
# Words that mark a piece of evidence as contradicting (whole words, case-insensitive);
# a request's contradiction_patterns replace them.
THINK_VERIFY_PATTERNS = _word_list(
    "THINK_VERIFY_PATTERNS",
    ["not", "no", "cannot", "false", "incorrect", "fails", "broken", "doesn't", "isn't", "won't"],
)
# Store the verification result on the thought.
THINK_PERSIST_VERIFICATION = env_bool("THINK_PERSIST_VERIFICATION", True)

# --- Cognitive frameworks ------------------------------------------------------------------
# Run the framework analysis on conversational thoughts (question, conclude).
THINK_ENHANCE = env_bool("THINK_ENHANCE", False)
