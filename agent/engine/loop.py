"""One turn of the FACD loop: update → should_stop → enumerate/score → execute → finalize.

``start`` and ``step`` return a new state in their outcome and never change the one they are
given (see agent/engine/__init__.py for what else is and is not pure)."""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from agent.engine.answers import persona_likelihoods
from agent.engine.beliefs import (
    OTHER,
    Beliefs,
    active_nodes,
    embed,
    recompute,
    write_beliefs,
)
from agent.engine.compose import Composed, compose
from agent.engine.confidence import reported_confidence
from agent.engine.config import EngineConfig
from agent.engine.executors import option_text
from agent.engine.phrasing import Phrased, phrase
from agent.engine.policy import answer_history, enumerate_and_score, options_table
from agent.engine.proposals import WORDING, final_note, noted, proposed, seed_hypotheses
from agent.engine.questions import NOT_SURE, PAIR_TEMPLATES, TRIAD_TEMPLATES, question_hash
from agent.errors import AnswerMismatch, AnswerRequired, InvalidEvent
from agent.safety import (
    CONCERN_FLAG,
    CRISIS_MESSAGE,
    CRISIS_RESOURCES,
    Assessment,
    assess,
    assess_reply,
    notice,
)
from agent.schemas import (
    MAX_REPLY,
    AgentActResponse,
    AgentResult,
    AgentState,
    AskUserAction,
    BeliefState,
    ConfirmedCrux,
    CrisisResource,
    Evidence,
    JournalEntry,
    SecondaryTheme,
    StopAction,
)

FREE_TEXT_MATCH = 0.6  # cosine a free-text answer needs to count as one of the options


@dataclass
class TurnOutcome:
    response: AgentActResponse
    seed: int
    evi_bits: float = 0.0
    entropy_before: float = 0.0
    entropy_after: float = 0.0
    top2: list[float] = field(default_factory=list)
    merges: int = 0
    guard_level: str = "none"  # "risk" when the distress detector stopped the loop

    @property
    def action_type(self) -> str:
        return self.response.action.type if self.response.action else "Stop"

    @property
    def exit_reason(self) -> str | None:
        return self.response.result.exit_reason if self.response.result else None


def turn_seed(state_id: UUID, revision: int) -> int:
    digest = hashlib.sha256(f"{state_id}:{revision}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def start(entry: JournalEntry, *, config: EngineConfig | None = None) -> TurnOutcome:
    """The first turn: seed the belief graph from the entry and take the first action.
    ``config``: the loop's tuning (default: the settings')."""
    config = config or EngineConfig.from_settings()
    state = AgentState(journal_entry=entry, belief_state=BeliefState())
    seed = turn_seed(state.state_id, 0)
    safety = assess([entry.text], where="act_init")
    if safety.risk:
        return _guardrail(state, seed, safety)
    if safety.concern:
        # Signed with the state, so every later turn keeps showing the resources.
        state.exit_flags[CONCERN_FLAG] = True
        state.safety_category = safety.category
    # With a chat model configured, its proposals seed the graph: the one model call of a play.
    state.belief_state.nodes, wording = seed_hypotheses(entry.text)
    summary = "seeded " + ", ".join(n.archetype for n in state.belief_state.nodes)
    if wording is not None:
        summary += f"; {wording}"
    state.evidence_log.append(
        Evidence(
            kind="EntryQuote",
            payload={
                "action_type": "Seed",
                "kind": "",
                "summary": summary,
                "cues": {n.archetype: n.supports for n in state.belief_state.nodes},
                **({WORDING: wording} if wording is not None else {}),
            },
            at_revision=0,
        )
    )
    before = recompute(state)
    return _with_notice(_advance(state, seed, before, config))


def _with_notice(outcome: TurnOutcome) -> TurnOutcome:
    """A turn that goes on after a concern carries it, calmly, on every later response."""
    state = outcome.response.state
    if state.exit_flags.get(CONCERN_FLAG) and outcome.guard_level == "none":
        outcome.response.safety = notice(Assessment("concern", state.safety_category))
    return outcome


def _answer_to(user_event: dict[str, Any] | None) -> UUID | None:
    raw = (user_event or {}).get("answer_to")
    if raw is None:
        return None
    if isinstance(raw, str):
        try:
            return UUID(raw)
        except ValueError:
            pass
    # A number or a non-UUID string can never name an action: bad input, not a stale answer.
    raise InvalidEvent(
        "user_event.answer_to must be the action_id (a UUID string) of the open question.",
        fields={"user_event.answer_to": ["Must be a UUID string."]},
    )


def step(
    state: AgentState, user_event: dict[str, Any] | None, *, config: EngineConfig | None = None
) -> TurnOutcome:
    """The next turn after ``state`` (which is not changed): check the answer to an open
    question, record it, and take the next action. The new state is unsigned."""
    config = config or EngineConfig.from_settings()
    state = state.model_copy(deep=True, update={"integrity": None})
    seed = turn_seed(state.state_id, state.revision)
    pending = state.last_action if isinstance(state.last_action, AskUserAction) else None
    answer_to = _answer_to(user_event)
    if pending is None:
        if answer_to is not None:
            raise AnswerMismatch(
                "There is no open question to answer in this state.",
                fields={"user_event.answer_to": ["There is no open question to answer."]},
            )
        return _with_notice(_advance(state, seed, recompute(state), config))
    value = _answer_value(pending, user_event, answer_to)
    safety = assess_reply(
        value,
        pending.quick_options or [],
        earlier_concern=bool(state.exit_flags.get(CONCERN_FLAG)),
        where="act_answer",
    )
    if safety.risk:
        return _guardrail(state, seed, safety)
    if safety.concern:
        state.exit_flags[CONCERN_FLAG] = True
        state.safety_category = safety.category
    before = recompute(state)
    state.evidence_log.append(_answer_evidence(state, pending, value.strip()))
    return _with_notice(_advance(state, seed, before, config))


def _answer_value(
    pending: AskUserAction, user_event: dict[str, Any] | None, answer_to: UUID | None
) -> str:
    """The writer's answer to the open question ``pending``; refused when it is missing, for
    another question, or not a non-empty string of at most MAX_REPLY characters."""
    if not user_event or answer_to is None:
        missing = "user_event.answer_to" if user_event else "user_event"
        raise AnswerRequired(
            "The last action asked a question: send user_event.answer_to and user_event.value.",
            fields={missing: ["This field is required: the last action asked a question."]},
        )
    if answer_to != pending.action_id:
        raise AnswerMismatch(
            "user_event.answer_to does not match the open question.",
            fields={"user_event.answer_to": ["Does not match the open question."]},
            extra={"expected": str(pending.action_id)},
        )
    value = user_event.get("value")
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_REPLY:
        raise AnswerRequired(
            f"user_event.value must be a non-empty string of at most {MAX_REPLY} characters.",
            fields={
                "user_event.value": [
                    f"Must be a non-empty string of at most {MAX_REPLY} characters."
                ]
            },
        )
    return value


def _answer_evidence(state: AgentState, action: AskUserAction, value: str) -> Evidence:
    options = action.quick_options or [NOT_SURE]
    lowered = [o.lower() for o in options]
    free_text = False
    if value.lower() in lowered:
        index = lowered.index(value.lower())
    else:
        vectors = embed([value, *options[:-1]])
        sims = vectors[1:] @ vectors[0]
        best = int(sims.argmax()) if len(sims) else -1
        if best >= 0 and sims[best] >= FREE_TEXT_MATCH:
            index = best
        else:
            index, free_text = len(options) - 1, True
    targets = [str(t) for t in action.targets]
    # The same answer model that chose the question (policy.options_table).
    nodes = {str(n.node_id): n for n in state.belief_state.nodes}
    catalogue = [option_text(nodes[t]) for t in targets]
    table = options_table(
        active_nodes(state), targets, options[: len(targets)], history=answer_history(state)
    )
    template_id = next(
        (t for t, stem in PAIR_TEMPLATES + TRIAD_TEMPLATES if stem == action.question), "custom"
    )
    arche = {str(n.node_id): n.archetype for n in state.belief_state.nodes}
    keys = [arche.get(t, "open") + ":" + t[:8] for t in targets]
    return Evidence(
        kind="UserAnswer",
        payload={
            "action_type": "AskUser",
            "kind": "",
            "action_id": str(action.action_id),
            "question_hash": question_hash(keys),
            "template_id": template_id,
            "option_index": index,
            "targets": targets,
            "value": value,
            "free_text": free_text,
            "likelihoods": {h: round(row[index], 6) for h, row in table.items() if h != OTHER},
            "default": round(table[OTHER][index], 6),
            "personas": persona_likelihoods(catalogue, index),
            "summary": f'AskUser: "{action.question}" → "{options[index]}"'
            + (" (free text)" if free_text else ""),
        },
        at_revision=state.revision,
    )


def _gap(beliefs: Beliefs) -> tuple[float, float]:
    values = sorted(beliefs.joint.values(), reverse=True)
    top = beliefs.joint[beliefs.ranked()[0]] if beliefs.ranked() else 0.0
    second = values[1] if len(values) > 1 else 0.0
    if values and values[0] != top:  # OTHER leads: no node is confirmed
        second = values[0]
    return top, top - second


def _advance(state: AgentState, seed: int, before: Beliefs, config: EngineConfig) -> TurnOutcome:
    rng = random.Random(seed)
    beliefs = recompute(state)
    write_beliefs(state, beliefs)
    new_revision = state.revision + 1
    top, gap = _gap(beliefs)
    outcome_kwargs: dict[str, Any] = {"seed": seed, "entropy_before": before.entropy}
    if top >= config.tau_high and gap >= config.delta_gap:
        return _finish(state, beliefs, "threshold", **outcome_kwargs)
    if new_revision >= config.max_steps:
        return _finish(state, beliefs, "budget", **outcome_kwargs)
    candidates = enumerate_and_score(state, beliefs, rng, config)
    viable = [c for c in candidates if c.evi >= config.epsilon_evi]
    if not viable:
        queries_left = state.budget_used < config.max_user_queries
        return _finish(state, beliefs, "epsilon" if queries_left else "budget", **outcome_kwargs)
    if config.policy == "random":
        asks = [c for c in viable if isinstance(c.action, AskUserAction)]
        best = rng.choice(asks) if asks else max(viable, key=lambda c: (c.score, c.evi))
    else:
        best = max(viable, key=lambda c: (c.score, c.evi))
    state.revision = new_revision
    state.last_action = best.action
    if isinstance(best.action, AskUserAction):
        state.budget_used += 1
        after = beliefs
    else:
        evidence = best.run()
        if evidence is not None:
            state.evidence_log.append(evidence)
        after = recompute(state)
        write_beliefs(state, after)
    response = AgentActResponse(complete=False, state=state, action=best.action)
    return TurnOutcome(
        response=response,
        evi_bits=best.evi,
        entropy_after=after.entropy,
        top2=sorted(after.nodes_only.values(), reverse=True)[:2],
        merges=sum(1 for n in state.belief_state.nodes if n.status == "merged"),
        **outcome_kwargs,  # type: ignore[arg-type]
    )


def _finish(
    state: AgentState, beliefs: Beliefs, reason: str, *, seed: int, entropy_before: float
) -> TurnOutcome:
    ranked = beliefs.ranked()
    by_id = {str(n.node_id): n for n in state.belief_state.nodes}
    top = by_id[ranked[0]]
    crux, secondary, note = _worded(
        state.journal_entry.text, beliefs, ranked, by_id, wording=noted(state)
    )
    trail = [
        f"r{e.at_revision} {e.kind}: {e.payload.get('summary', '')}" for e in state.evidence_log
    ]
    top_p, gap = _gap(beliefs)
    posterior = beliefs.joint[ranked[0]]
    confidence = reported_confidence(posterior)
    trail.append(
        f"Stop({reason}): top p={top_p:.2f}, gap={gap:.2f}, questions={state.budget_used}; "
        f"posterior {posterior:.4f} → reported confidence {confidence:.4f}"
    )
    trail.append(note)
    result = AgentResult(
        # Secondary themes keep their posterior share: the fit rates say how often the leading
        # statement fits, which is what the writer is asked to accept.
        confirmed_crux=ConfirmedCrux(
            node_id=top.node_id,
            text=crux.text,
            confidence=round(confidence, 4),
            evidence_spans=crux.spans,
        ),
        secondary_themes=secondary,
        reasoning_trail="\n".join(trail),
        exit_reason=reason,  # type: ignore[arg-type]
    )
    return _complete(
        state,
        result,
        seed,
        entropy_before,
        beliefs.entropy,
        sorted(beliefs.nodes_only.values(), reverse=True)[:2],
    )


def _worded(
    entry: str,
    beliefs: Beliefs,
    ranked: list[str],
    by_id: dict[str, Any],
    *,
    wording: str | None = None,
) -> tuple[Composed, list[SecondaryTheme], str]:
    """The confirmed crux and the secondary themes (posterior ≥ 0.1) in the writer's terms:
    a hypothesis the chat model proposed at the first turn keeps its words (``wording``, the
    first turn's note, says the model was asked then: it is not asked again); otherwise the
    offline composer's, or with no first-turn note the chat model's when one is configured and
    its answer passes every check (agent/engine/phrasing.py). The note says which."""
    live = [by_id[h].archetype for h in ranked]
    top = by_id[ranked[0]]
    crux = proposed(top) or compose(entry, top.archetype, live, fallback=top.text)
    kept = [h for h in ranked[1:] if beliefs.joint[h] >= 0.1]
    offline = {
        h: proposed(by_id[h])
        or compose(entry, by_id[h].archetype, live, avoid=crux.spans, fallback=by_id[h].text)
        for h in kept
    }
    themes = {by_id[h].archetype: offline[h] for h in kept}
    if wording is None:
        phrased = phrase(entry, top.archetype, [by_id[h].archetype for h in kept], crux, themes)
    else:
        phrased = Phrased(crux, themes, final_note(top, wording))
    secondary = [
        SecondaryTheme(
            node_id=by_id[h].node_id,
            text=theme.text,
            confidence=round(beliefs.joint[h], 4),
            evidence_spans=theme.spans,
        )
        for h in kept
        for theme in [phrased.themes.get(by_id[h].archetype, offline[h])]
    ]
    return phrased.crux, secondary, phrased.note


def _guardrail(state: AgentState, seed: int, safety: Assessment) -> TurnOutcome:
    result = AgentResult(
        confirmed_crux=None,
        reasoning_trail="Stop(guardrail): the distress gate fired; no further questions.",
        exit_reason="guardrail",
        crisis_resources=[CrisisResource(**r) for r in CRISIS_RESOURCES],
        message=CRISIS_MESSAGE,
    )
    outcome = _complete(state, result, seed, 0.0, 0.0, [])
    outcome.guard_level = "risk"
    outcome.response.safety = notice(safety)
    return outcome


def _complete(
    state: AgentState,
    result: AgentResult,
    seed: int,
    h_before: float,
    h_after: float,
    top2: list[float],
) -> TurnOutcome:
    stop = StopAction(exit_reason=result.exit_reason)
    state.revision += 1
    state.last_action = stop
    state.exit_flags = {
        "complete": True,
        result.exit_reason: True,
        **({CONCERN_FLAG: True} if state.exit_flags.get(CONCERN_FLAG) else {}),
    }
    response = AgentActResponse(complete=True, state=state, action=stop, result=result)
    return TurnOutcome(
        response=response, seed=seed, entropy_before=h_before, entropy_after=h_after, top2=top2
    )
