"""Why a stored thought has its mode: the mode selector's reason, as the page shows it.

The think pipeline does not store the reason (only the mode), so it is the selector's answer
for the stored content again: the same words give the same reason, unless the caller named the
mode (a hint), which is then what the page says."""

from __future__ import annotations

from thoughts.models import Thought
from thoughts.think.modes import mode_select


def mode_reason(thought: Thought) -> str:
    if not thought.mode:
        return "No mode: this thought was stored without the think pipeline."
    choice = mode_select(content=thought.content, hint=None)
    if choice.mode == thought.mode:
        return choice.reason
    return "named by the caller (a mode hint)"
