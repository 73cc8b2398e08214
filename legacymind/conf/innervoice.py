"""Settings of the `innervoice` app, read from the environment (listed in .env.example).

Names and defaults follow spec 001's "Configuration via Environment".
"""

from __future__ import annotations

from legacymind.conf.env import env, env_bool, env_choice, env_float, env_int  # noqa: F401

# Model of the CLI stage for synthesis and feedback; empty: the chat chain's own (IV_MODELS,
# GEMINI_MODEL, gemini-2.5-pro). The Grok stage keeps GROK_MODEL.
INNER_VOICE_MODEL = env.str("INNER_VOICE_MODEL", default="").strip()
# Sampling temperature of the synthesis (the feedback question uses 0.2, spec 000 Q&A 1).
INNER_VOICE_TEMP = env_float("INNER_VOICE_TEMP", 0.8, low=0.0, high=2.0)
# Exchanges of a thread the model sees; older ones are folded into the thread's summary.
INNER_VOICE_HISTORY = env_int("INNER_VOICE_HISTORY", 10, low=1, high=100)
# Seconds without interaction after which an open thread ends and a new one starts.
INNER_VOICE_TIMEOUT = env_int("INNER_VOICE_TIMEOUT", 3600, low=60, high=30 * 86400)
