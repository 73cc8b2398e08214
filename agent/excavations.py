"""v2 excavations (init/step with probes, ≤4 hypotheses, confirmations) on the same engine as
v3, and the v2 Probe ↔ v3 AskUser adapter."""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

from django.conf import settings
from django.utils import timezone

from agent.engine.answers import answer_table, statement
from agent.engine.archetypes import BY_KEY
from agent.engine.beliefs import embed, seed_nodes
from agent.engine.infotheory import bounded_update, normalise
from agent.engine.questions import NOT_SURE, PAIR_TEMPLATES, lint
from agent.errors import (
    AnswerMismatch,
    ExcavationIncomplete,
    IntegrityMismatch,
    StateComplete,
)
from agent.integrity import sign, verify
from agent.reflections import reflection_create
from agent.safety import CONCERN_FLAG, Assessment, assess, assess_reply, notice, refuse_at_risk
from agent.schemas import (
    AskUserAction,
    CruxHypothesis,
    ExcavationResponse,
    ExcavationResult,
    ExcavationState,
    ExcavationSummary,
    JournalEntry,
    Probe,
    ProbeTurn,
    Reflection,
)

DISCARD_BELOW = 0.08


@dataclass(frozen=True)
class ExcavationReply:
    """A step: the writer's reply to the open probe of a signed state."""

    state: ExcavationState
    user_reply: str
    expected_probe_id: UUID


def probe_to_askuser(probe: Probe) -> AskUserAction:
    """Adapter: a v2 probe is a v3 AskUser with the same id, wording, options and targets."""
    return AskUserAction(
        action_id=probe.probe_id,
        question=probe.question,
        quick_options=probe.quick_options,
        targets=list(probe.targets),
        rationale="v2 probe",
    )


def _option(h: CruxHypothesis) -> str:
    return BY_KEY[h.archetype].option if h.archetype in BY_KEY else " ".join(h.text.split()[:8])


def _probe(state: ExcavationState) -> Probe:
    active = sorted(
        (h for h in state.hypotheses if h.status == "active"), key=lambda h: -h.confidence
    )[:2]
    stem = next(
        s
        for _, s in PAIR_TEMPLATES[state.budget_used % len(PAIR_TEMPLATES) :] + PAIR_TEMPLATES
        if lint(s, [_option(h) for h in active] + [NOT_SURE]).ok
    )
    return Probe(
        question=stem,
        targets=[h.hypothesis_id for h in active],
        quick_options=[_option(h) for h in active] + [NOT_SURE],
        created_at=timezone.now(),
    )


def excavation_start(*, entry: JournalEntry, client_id: str) -> ExcavationResponse:
    safety = assess([entry.text], where="excavation")
    refuse_at_risk(safety, field="journal_entry.text", what="entry")
    nodes = seed_nodes(entry.text)[:4]
    weights = normalise({str(n.node_id): n.priors or 0.0 for n in nodes})
    state = ExcavationState(
        journal_entry=entry,
        hypotheses=[
            CruxHypothesis(
                hypothesis_id=n.node_id,
                text=n.text,
                archetype=n.archetype,
                confidence=round(weights[str(n.node_id)], 6),
            )
            for n in nodes
        ],
    )
    if safety.concern:
        state.exit_flags[CONCERN_FLAG] = True
    state.last_probe = _probe(state)
    state.revision = 1
    sign(state, client_id=client_id)
    return ExcavationResponse(
        complete=False, state=state, probe=state.last_probe, safety=notice(safety)
    )


def excavation_step(reply: ExcavationReply, *, client_id: str) -> ExcavationResponse:
    """Read the reply to the open probe: update the hypotheses, then ask the next probe or
    finish. The state is changed in place and signed again for ``client_id``."""
    state, user_reply = reply.state, reply.user_reply
    probe = _open_probe(state, reply.expected_probe_id, client_id=client_id)
    options = probe.quick_options or [NOT_SURE]
    safety = _reply_safety(state, user_reply, options)
    index = _matched_option(user_reply, options)
    signals = _update_hypotheses(state, probe, index)
    state.probes_log.append(
        ProbeTurn(
            probe=probe,
            user_reply=user_reply,
            signals=signals,
            analysis=f'reply matched "{options[index]}"',
            updated_hypotheses=list(state.hypotheses),
        )
    )
    state.budget_used += 1
    state.revision += 1
    ranked = sorted(
        (h for h in state.hypotheses if h.status == "active"), key=lambda h: -h.confidence
    )
    reason = _exit_reason(state, ranked)
    if reason is None:
        state.last_probe = _probe(state)
        sign(state, client_id=client_id)
        return ExcavationResponse(
            complete=False, state=state, probe=state.last_probe, safety=notice(safety)
        )
    result = _finish(state, ranked, reason, concern=safety.concern)
    sign(state, client_id=client_id)
    return ExcavationResponse(complete=True, state=state, result=result, safety=notice(safety))


def _open_probe(state: ExcavationState, expected_probe_id: object, *, client_id: str) -> Probe:
    """The probe the reply answers, in a state this client may continue."""
    # Bound to the client as v3's state is (agent.integrity): another user's state is refused
    # exactly as a tampered one.
    if not verify(state, client_id=client_id):
        raise IntegrityMismatch("State integrity check failed.")
    if state.exit_flags.get("complete"):
        raise StateComplete("This excavation is already complete.")
    probe = state.last_probe
    if probe is None or str(expected_probe_id) != str(probe.probe_id):
        raise AnswerMismatch(
            "expected_probe_id does not match the open probe.",
            fields={"expected_probe_id": ["Does not match the open probe."]},
            extra={"expected": str(probe.probe_id) if probe else None},
        )
    return probe


def _reply_safety(state: ExcavationState, user_reply: str, options: list[str]) -> Assessment:
    """Refused at risk; a concern, now or earlier in the session, is kept in the state and
    carried by every later response."""
    earlier = bool(state.exit_flags.get(CONCERN_FLAG))
    safety = assess_reply(user_reply, options, earlier_concern=earlier, where="excavation")
    refuse_at_risk(safety, field="user_reply", what="reply")
    if safety.concern or earlier:
        state.exit_flags[CONCERN_FLAG] = True
        safety = safety if safety.concern else Assessment("concern", None)
    return safety


def _matched_option(user_reply: str, options: list[str]) -> int:
    """The option the reply names, else the closest one by meaning, else "not sure"."""
    lowered = [o.lower() for o in options]
    if user_reply.strip().lower() in lowered:
        return lowered.index(user_reply.strip().lower())
    vectors = embed([user_reply, *options[:-1]])
    sims = vectors[1:] @ vectors[0]
    return int(sims.argmax()) if sims.max() >= 0.6 else len(options) - 1


def _update_hypotheses(state: ExcavationState, probe: Probe, index: int) -> list[str]:
    """Bounded Bayesian update of the active hypotheses on the answer at ``index``; counts a
    confirmation for the one it names and discards the ones left below DISCARD_BELOW. Returns
    the turn's signals."""
    active = [h for h in state.hypotheses if h.status == "active"]
    ids = [str(h.hypothesis_id) for h in active]
    by_id = {str(h.hypothesis_id): h for h in active}
    table = answer_table(
        {h: statement(by_id[h]) for h in ids},
        [_option(by_id[str(t)]) for t in probe.targets],
    )
    prior = normalise({str(h.hypothesis_id): h.confidence for h in active})
    post = bounded_update(
        prior,
        {h: table[h][index] for h in ids},
        max_step=settings.AGENT_MAX_STEP_LOGIT,
        clip=settings.AGENT_LOGIT_CLIP,
    )
    signals = []
    for h in active:
        h.confidence = round(post[str(h.hypothesis_id)], 6)
        if index < len(probe.targets) and str(probe.targets[index]) == str(h.hypothesis_id):
            h.confirmations += 1
            signals.append(f"confirmed: {h.archetype}")
        if h.confidence < DISCARD_BELOW:
            h.status = "discarded"
            h.discard_reason = f"confidence {h.confidence:.2f} after {state.budget_used + 1} probes"
    return signals


def _exit_reason(state: ExcavationState, ranked: list[CruxHypothesis]) -> str | None:
    """Why the excavation stops after this probe (``ranked``: the active hypotheses, most
    confident first), or None to ask another."""
    top = ranked[0]
    gap = top.confidence - (ranked[1].confidence if len(ranked) > 1 else 0.0)
    if top.confidence >= settings.EXCAVATION_TAU_HIGH and gap >= settings.EXCAVATION_DELTA_GAP:
        return "threshold"
    if top.confirmations >= settings.EXCAVATION_N_CONFIRMATIONS:
        return "confirmations"
    if state.budget_used >= settings.EXCAVATION_K_BUDGET or len(ranked) < 2:
        return "budget"
    return None


def _finish(
    state: ExcavationState, ranked: list[CruxHypothesis], reason: str, *, concern: bool
) -> ExcavationResult:
    """Confirm the leading hypothesis, close the state and write the result."""
    top = ranked[0]
    top.status = "confirmed"
    state.last_probe = None
    state.exit_flags = {
        "complete": True,
        reason: True,
        **({CONCERN_FLAG: True} if concern else {}),
    }
    return ExcavationResult(
        confirmed_crux=top,
        secondary_themes=[h for h in ranked[1:] if h.confirmations >= 1],
        excavation_summary=ExcavationSummary(
            exit_reason=reason,  # type: ignore[arg-type]
            reasoning_trail="\n".join(
                f"{t.probe.question} → {t.analysis}" for t in state.probes_log
            ),
            discarded_log=[
                f"{h.text} ({h.discard_reason})"
                for h in state.hypotheses
                if h.status == "discarded"
            ],
        ),
    )


def completed_result(*, state: ExcavationState, client_id: str) -> ExcavationResult:
    """Rebuild the result of a completed excavation signed for this client (/v2/reflections)."""
    if not verify(state, client_id=client_id):
        raise IntegrityMismatch("State integrity check failed.")
    if not state.exit_flags.get("complete"):
        raise ExcavationIncomplete("The excavation is not complete yet; finish it first.")
    confirmed = next(h for h in state.hypotheses if h.status == "confirmed")
    reason = next(k for k in ("threshold", "confirmations", "budget") if state.exit_flags.get(k))
    return ExcavationResult(
        confirmed_crux=confirmed,
        secondary_themes=[
            h for h in state.hypotheses if h.status == "active" and h.confirmations >= 1
        ],
        excavation_summary=ExcavationSummary(
            exit_reason=reason,  # type: ignore[arg-type]
            reasoning_trail=f"{len(state.probes_log)} probes",
        ),
    )


def excavation_reflect(state: ExcavationState, *, client_id: str) -> Reflection:
    """/v2/reflections: the Reflection on a completed excavation's entry, focused on the crux
    it confirmed."""
    result = completed_result(state=state, client_id=client_id)
    return reflection_create(entry=state.journal_entry, focus=result.confirmed_crux.text)
