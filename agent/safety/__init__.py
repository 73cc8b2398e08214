"""The distress detector: one check for every place that reads what a writer wrote.

``assess(texts, where=...)`` reads a journal entry, an answer or an inner-voice question in
three layers and returns a level and a warning-sign category, never the matched words:

1. explicit first-person statements, by pattern (:mod:`agent.safety.patterns`): ``risk``; a
   bare mention of suicide, an overdose or self-harm: ``risk`` when layer 2 reads a sign,
   ``concern`` otherwise;
2. warning signs by meaning with the local sentence model (:mod:`agent.safety.semantic`);
3. the configured chat model, when there is one (:mod:`agent.safety.model_check`): it may
   raise the level, never lower it.

``risk`` stops the journaling loop and shows crisis resources; ``concern`` shows them calmly
and lets the writer go on. Nothing is stored and the text is never logged: Prometheus counts
detections by level, category and where they happened.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent import metrics
from agent.errors import GuardrailTriggered
from agent.safety.model_check import enabled as model_check_enabled
from agent.safety.model_check import model_check
from agent.safety.patterns import matches, without_idioms
from agent.safety.resources import CONCERN_MESSAGE, CRISIS_MESSAGE, CRISIS_RESOURCES
from agent.safety.semantic import CATEGORIES, LEVELS
from agent.safety.semantic import assess as semantic_assess
from agent.schemas import CrisisResource, SafetyNotice

__all__ = [
    "CATEGORIES",
    "CONCERN_FLAG",
    "CONCERN_MESSAGE",
    "CRISIS_MESSAGE",
    "CRISIS_RESOURCES",
    "LEVELS",
    "Assessment",
    "assess",
    "assess_reply",
    "notice",
    "refuse_at_risk",
]

_RANK = {level: i for i, level in enumerate(LEVELS)}
# The exit flag a signed session state (v2 or v3) carries once a concern was found in it.
CONCERN_FLAG = "safety_concern"


@dataclass(frozen=True)
class Assessment:
    level: str  # "none" | "concern" | "risk"
    category: str | None  # a CATEGORIES name, None at "none"
    layer: str | None = None  # "pattern" | "semantic" | "model": which layer decided

    @property
    def risk(self) -> bool:
        return self.level == "risk"

    @property
    def concern(self) -> bool:
        return self.level == "concern"

    def message(self) -> str | None:
        return {"risk": CRISIS_MESSAGE, "concern": CONCERN_MESSAGE}.get(self.level)


NONE = Assessment("none", None)


def notice(assessment: Assessment) -> SafetyNotice:
    """The API's view of an assessment: level, category and what to show; never the text."""
    if assessment.level == "none":
        return SafetyNotice()
    return SafetyNotice(
        level=assessment.level,  # type: ignore[arg-type]
        category=assessment.category,
        message=assessment.message(),
        crisis_resources=[CrisisResource(**r) for r in CRISIS_RESOURCES],
    )


def assess(texts: list[str], *, where: str) -> Assessment:
    """The level of everything in ``texts`` read together (an entry, or an entry's answers).

    ``where`` names the door (``act_init``, ``act_answer``, ``excavation``, ``reflection``,
    ``inner_voice``) for the metrics.
    """
    texts = [t for t in texts if t and t.strip()]
    result = _layers(texts) if texts else NONE
    if result.level != "none":
        metrics.DISTRESS.labels(level=result.level, category=result.category, where=where).inc()
    return result


def assess_reply(
    reply: str, options: list[str], *, earlier_concern: bool, where: str
) -> Assessment:
    """A writer's answer to a question. A quick option is the agent's wording, not the
    writer's, and is not read; a second sign after an earlier concern in the same session is a
    risk (warning signs that cluster are the ones to act on)."""
    if reply.strip().lower() in {o.lower() for o in options}:
        return NONE
    safety = assess([reply], where=where)
    if safety.concern and earlier_concern:
        return Assessment("risk", safety.category, safety.layer)
    return safety


def _layers(texts: list[str]) -> Assessment:
    found = [matches(text) for text in texts]
    statement = next((s for s, _ in found if s), None)
    if statement:
        return Assessment("risk", statement, "pattern")
    mentioned = next((m for _, m in found if m), None)
    level, category = semantic_assess([without_idioms(t) for t in texts])
    if mentioned:
        # A bare "suicide" or "overdose" says what the entry is about, not whose it is: the
        # writer's own when the meaning layer reads a sign, a risk; otherwise (news, a friend,
        # a course) a concern, so the resources are shown either way.
        result = Assessment("risk" if level != "none" else "concern", mentioned, "pattern")
    else:
        result = Assessment(level, category, "semantic") if level != "none" else NONE
    if result.level != "risk" and model_check_enabled():
        checked = model_check(texts)
        if checked and _RANK[checked[0]] > _RANK[result.level]:
            result = Assessment(checked[0], checked[1] or result.category or "unspecified", "model")
    return result


def refuse_at_risk(safety: Assessment, *, field: str, what: str) -> None:
    """v1 and v2 have no guardrail exit in their contracts: at risk the request is refused with
    the level, the category and the crisis resources beside the envelope."""
    if not safety.risk:
        return
    raise GuardrailTriggered(
        f"The {what} suggests you may be in danger. Please call or text 988 (US), text HOME "
        "to 741741, call emergency services, or see findahelpline.com.",
        fields={field: ["Suggests a risk of harm; see detail for help."]},
        extra={
            "guardrail": safety.level,
            "category": safety.category,
            "crisis_resources": CRISIS_RESOURCES,
        },
    )
