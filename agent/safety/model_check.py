"""Layer 3 of the distress detector: the configured chat model reads the text too.

It runs only when a chat model is configured (``DISTRESS_MODEL_CHECK``: ``auto`` runs it when
the environment names a CLI command or a Grok key; ``on`` always tries; ``off`` never). Its
answer can raise the level the other layers found, never lower it, and any failure (no model,
a timeout, an answer that is not the JSON asked for) leaves their result as it was. The text
goes to the model the operator chose and nowhere else; it is never logged.
"""

from __future__ import annotations

import json
import logging
import os
import re

from django.conf import settings

from agent.safety.semantic import CATEGORIES, LEVELS
from legacymind.providers import chat

logger = logging.getLogger("agent.safety")
CONFIGURING = ("IV_CLI_CMD", "IV_SYNTH_CLI_CMD", "GROK_API_KEY")

SYSTEM = (
    "You screen journal text for suicide-risk warning signs, as a crisis-line counsellor "
    "would. Categories: " + ", ".join(CATEGORIES) + ". Levels: risk (explicit intent, a plan "
    "or means, goodbyes or affairs put in order with an undertone of not being around, or "
    "several signs together), concern (one indirect sign such as feeling a burden, trapped, "
    "hopeless, withdrawing, a sudden calm after a long low), none (no sign; grief, fiction, "
    "games, idioms like 'this deadline is killing me', moving house, quitting a job are none). "
    'Answer with ONE JSON object only: {"level": "none|concern|risk", "category": '
    '"<category or null>"}.'
)
_OBJECT = re.compile(r"\{.*?\}", re.DOTALL)


def enabled() -> bool:
    mode = settings.DISTRESS_MODEL_CHECK
    if mode == "auto":
        return any(os.environ.get(name, "").strip() for name in CONFIGURING)
    return bool(mode == "on")


def model_check(texts: list[str]) -> tuple[str, str | None] | None:
    """(level, category) as the model reads ``texts``; None when it did not answer usably."""
    prompt = "\n\n".join(f"Text {i + 1}:\n{t}" for i, t in enumerate(texts))
    try:
        answer = chat.complete(prompt, system=SYSTEM, temperature=0.0)
    except chat.ChatError as exc:
        logger.info("distress model check: no chat model answered (%s)", type(exc).__name__)
        return None
    match = _OBJECT.search(answer.text)
    try:
        data = json.loads(match.group(0)) if match else None
    except ValueError:
        data = None
    level = data.get("level") if isinstance(data, dict) else None
    if level not in LEVELS:
        logger.warning("distress model check: %s gave an unusable answer", answer.provider)
        return None
    category = data.get("category") if isinstance(data, dict) else None
    return str(level), category if category in CATEGORIES else None
