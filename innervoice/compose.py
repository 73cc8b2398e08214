"""What the inner voice says: the synthesis and feedback prompts for the chat chain, and the
deterministic offline composer used when no chat provider answers (it says so in the provider).

The question reaches the model inside the prompt and nowhere else: it is never stored or logged.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from innervoice.retrieval import Snippet
from kg.extraction.phrases import strip_sources

OFFLINE_PROVIDER = "offline-composer"
OFFLINE_MODEL = "deterministic-v1"
FEEDBACK_TEMPERATURE = 0.2  # spec 000 Q&A 1
# A model's answer is asked to be short; these bound what a runaway one can store (a thought of
# megabytes, repeated in every thread detail).
ANSWER_MAX = 8000
FEEDBACK_MAX = 600

SYSTEM = (
    "You are an inner voice: a distinct intelligence examining someone's stored thoughts and "
    "memories with your own analytical style. Synthesise patterns they might not see, connect "
    "disparate memories, and build on the earlier dialogue. Ground every claim only in the "
    "snippets given; when they do not answer the question, say so plainly. Answer briefly."
)
FEEDBACK_INSTRUCTION = (
    "Propose the single highest-impact next question that would improve the answer above. "
    "Keep it under 2 short lines. No bullets, no preamble."
)
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")


@dataclass(frozen=True)
class HistoryItem:
    position: int
    synthesis: str
    feedback: str
    private: bool = False


def synthesis_prompt(
    *, query: str, snippets: Sequence[Snippet], history: Sequence[HistoryItem], summary: str
) -> str:
    parts: list[str] = []
    if summary:
        parts.append(f"## Earlier in this dialogue (summary)\n{summary}")
    if history:
        lines = []
        for item in history:
            lines.append(f"[{item.position}] You synthesised: {item.synthesis}")
            if item.feedback:
                lines.append(f"[{item.position}] You then asked: {item.feedback}")
        parts.append("## Previous dialogue\n" + "\n".join(lines))
    parts.append(f"## Question\n{query}")
    if snippets:
        listed = "\n".join(f"- ({s.ref}) {s.text}" for s in snippets)
        parts.append(f"## Snippets\n{listed}")
    else:
        parts.append("## Snippets\n(none matched)")
    parts.append(
        "Answer in a few sentences, grounded only in the snippets above (and the dialogue). "
        "No preamble."
    )
    return "\n\n".join(parts)


def feedback_prompt(*, answer: str) -> str:
    return f"{answer}\n\n{FEEDBACK_INSTRUCTION}"


OFFLINE_HEADER = (
    f"No chat model answered; here is what your stored material says ({OFFLINE_PROVIDER}):"
)


def first_sentence(text: str, limit: int = 200) -> str:
    for match in _SENTENCE.finditer(text):
        sentence = " ".join(match.group().split())
        if len(sentence.split()) >= 2 and not sentence.lower().startswith("sources:"):
            return sentence if len(sentence) <= limit else sentence[: limit - 1] + "…"
    return " ".join(text.split())[:limit]


def summary_sentence(text: str) -> str:
    """What a synthesis said, in one sentence, for a thread's summary. An offline synthesis
    opens with the same header every time: its first bullet says what it found instead."""
    if text.startswith(OFFLINE_HEADER):
        text = text[len(OFFLINE_HEADER) :].lstrip().removeprefix("- ")
    return first_sentence(text)


def synthesis_offline(*, snippets: Sequence[Snippet]) -> str:
    """Deterministic: the same snippets give the same text, built only from their words. It
    cites no ids, as a model's answer is stored without its own (``model_answer``): the
    synthesis thought's one Sources line (spec 000) and ``sources_compact`` name the snippets,
    in this order, and a page links them."""
    if not snippets:
        return (
            "No chat model answered, and none of your stored thoughts or memories match this "
            "question yet."
        )
    lines = [OFFLINE_HEADER]
    lines += [f"- {first_sentence(s.text)}" for s in snippets[:3]]
    return "\n".join(lines)


def feedback_offline(*, snippets: Sequence[Snippet]) -> str:
    if not snippets:
        return "What have you already written down that bears on this question?"
    claim = first_sentence(snippets[0].text, 120).rstrip(" .!?…")
    return f"What would confirm or contradict this: {claim}?"


def lines_truncate(text: str, max_lines: int) -> str:
    """The first ``max_lines`` non-blank lines (spec 000 Q&A 9: on newline boundaries)."""
    lines = [line.rstrip() for line in text.strip().splitlines() if line.strip()]
    return "\n".join(lines[:max_lines])


def sources_line(sources_compact: str) -> str:
    return f"Sources: {sources_compact}" if sources_compact else "Sources: none"


def answer_shown(content: str) -> str:
    """A synthesis thought's text as a reader sees it beside its linked sources: without the
    Sources line ``answer_compose`` appended and without ``thoughts:``/``kge:``/``kgo:`` ids
    (an offline answer stored before it stopped citing them inline still has them)."""
    return strip_sources(content).strip()


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def model_answer(text: str) -> str:
    """A model's synthesis as stored: without the sources it cited itself (they may name ids
    that were never among the snippets; the stored Sources line is the selection's), at most
    ANSWER_MAX characters. Empty when nothing else was said."""
    return _cut(strip_sources(text).strip(), ANSWER_MAX)


def feedback_clean(text: str, max_lines: int) -> str:
    return _cut(lines_truncate(strip_sources(text), max_lines), FEEDBACK_MAX)
