"""The inner voice's two chat calls: the synthesis over the selected snippets and the
follow-up question, each through the chat chain with the offline composer behind it."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.conf import settings

from innervoice import compose
from innervoice.retrieval import Selection
from legacymind.providers import chat

if TYPE_CHECKING:
    from innervoice.services import AskParams

logger = logging.getLogger("innervoice")


def _chat_environ() -> dict[str, str] | None:
    """The chain's environment, with INNER_VOICE_MODEL as the CLI's model when set."""
    if not settings.INNER_VOICE_MODEL:
        return None
    return {**os.environ, "IV_MODELS": settings.INNER_VOICE_MODEL}


def _synthesise(prompt: str, selection: Selection) -> tuple[str, str, str]:
    try:
        result = chat.complete(
            prompt,
            system=compose.SYSTEM,
            temperature=settings.INNER_VOICE_TEMP,
            environ=_chat_environ(),
        )
    except chat.ChatError as exc:
        logger.debug("inner_voice: no chat provider (%s); offline composer", type(exc).__name__)
    else:
        answer = compose.model_answer(result.text)
        if answer:
            return answer, result.provider, result.model
        logger.debug("inner_voice: %s answered only citations; offline composer", result.provider)
    text = compose.synthesis_offline(snippets=selection.snippets)
    return text, compose.OFFLINE_PROVIDER, compose.OFFLINE_MODEL


def _feedback(answer: str, selection: Selection, *, offline: bool, max_lines: int) -> str:
    text = ""
    if not offline:
        try:
            text = chat.complete(
                compose.feedback_prompt(answer=answer),
                temperature=compose.FEEDBACK_TEMPERATURE,
                environ=_chat_environ(),
            ).text
        except chat.ChatError as exc:
            logger.debug("inner_voice: feedback offline (%s)", type(exc).__name__)
    text = compose.feedback_clean(text, max_lines)
    return text or compose.lines_truncate(
        compose.feedback_offline(snippets=selection.snippets), max_lines
    )


@dataclass(frozen=True)
class Composed:
    """What the model (or the offline composer) said: the synthesis and its follow-up."""

    answer: str
    provider: str
    model: str
    content: str  # the answer with its sources line: the synthesis thought's text
    feedback: str | None


def answer_compose(
    *,
    params: AskParams,
    selection: Selection,
    history: list[compose.HistoryItem],
    summary: str,
) -> Composed:
    """The synthesis, then (when asked for) the follow-up question."""
    prompt = compose.synthesis_prompt(
        query=params.query, snippets=selection.snippets, history=history, summary=summary
    )
    answer, synth_provider, synth_model = _synthesise(prompt, selection)
    feedback = None
    if params.include_feedback:
        feedback = _feedback(
            answer,
            selection,
            offline=synth_provider == compose.OFFLINE_PROVIDER,
            max_lines=params.feedback_max_lines,
        )
    content = f"{answer}\n\n{compose.sources_line(selection.sources_compact)}"
    return Composed(answer, synth_provider, synth_model, content, feedback)
