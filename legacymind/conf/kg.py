"""Settings of the `kg` app, read from the environment (listed in .env.example).

The chat-provider variables of the extractor chain (IV_CLI_*, IV_SYNTH_*, IV_MODELS,
GEMINI_MODEL, IV_SCRIPT_PATH, IV_CLI_TIMEOUT, IV_ALLOW_GROK, GROK_*) are read at call time by
``legacymind.providers.chat`` so a deployment can switch providers without a restart; the ones
with a format are also checked here, so a malformed one stops start-up naming the variable
instead of failing (or, for IV_ALLOW_GROK, quietly switching Grok off) at every extraction.
"""

from __future__ import annotations

import os

from django.core.exceptions import ImproperlyConfigured

from legacymind.conf.env import env, env_bool, env_choice, env_float, env_int  # noqa: F401
from legacymind.providers import chat_env


def _chat_variables_checked() -> None:
    try:
        chat_env.check(os.environ)
    except ValueError as exc:
        raise ImproperlyConfigured(str(exc)) from exc


_chat_variables_checked()

# Stage 3 of the extractor chain: the offline heuristic, when the CLI and Grok both fail.
IV_HEURISTIC_FALLBACK = env_bool("IV_HEURISTIC_FALLBACK", True)
IV_HEURISTIC_MAX_ENTITIES = env_int("IV_HEURISTIC_MAX_ENTITIES", 20, low=0, high=1000)
IV_HEURISTIC_MAX_EDGES = env_int("IV_HEURISTIC_MAX_EDGES", 30, low=0, high=1000)
KG_HEURISTIC_ENTITY_CONFIDENCE = env_float("KG_HEURISTIC_ENTITY_CONFIDENCE", 0.7, low=0, high=1)
KG_HEURISTIC_EDGE_CONFIDENCE = env_float("KG_HEURISTIC_EDGE_CONFIDENCE", 0.6, low=0, high=1)
# Longest text sent to an extractor; longer texts are cut (and the model told it is truncated).
KG_EXTRACT_MAX_CHARS = env_int("KG_EXTRACT_MAX_CHARS", 12000, low=100, high=200000)
# Check a chat model's extraction against the text: names written in it, evidence a sentence of
# it (else the sentence naming both ends, else the edge goes), types in the vocabulary.
KG_EXTRACT_GROUNDED = env_bool("KG_EXTRACT_GROUNDED", True)
# Extract every committed thought in the background (the thoughts pipeline calls the service).
KG_AUTO_EXTRACT = env_bool("KG_AUTO_EXTRACT", True)
# Review suggestions: how many canonical entities per candidate, and the weakest one shown.
KG_SUGGESTIONS = env_int("KG_SUGGESTIONS", 3, low=0, high=10)
KG_SUGGESTION_MIN_SCORE = env_float("KG_SUGGESTION_MIN_SCORE", 0.5, low=0, high=1)
