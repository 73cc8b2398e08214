"""The v3 agent's turns: ``agent_act`` runs one turn (integrity check, idempotency, concurrency,
metrics and the per-turn log line: hashes only, never text); ``journal_turn`` runs the journal
page's turn and the internal steps after it, up to the next question or the result.

Requests come in validated and responses go out unsigned: the interfaces (agent.api,
agent.pages) validate the body and sign the new state for their client."""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable
from functools import partial
from itertools import count

from django.conf import settings
from django.core.cache import cache

from agent import metrics
from agent.engine.config import EngineConfig
from agent.engine.loop import TurnOutcome, start, step
from agent.engine.questions import text_hash
from agent.errors import (
    BudgetExhausted,
    IdempotencyKeyReused,
    IntegrityMismatch,
    RateLimited,
    RevisionInProgress,
    StaleRevision,
    StateComplete,
)
from agent.integrity import verify
from agent.schemas import (
    AgentActInitRequest,
    AgentActRequest,
    AgentActResponse,
    AgentActStepRequest,
    AgentState,
    AskUserAction,
)

logger = logging.getLogger("agent.turns")
CLAIM_TTL = 24 * 3600  # a revision, once continued, stays taken (stale replays get 409)
PENDING_TTL = 60  # a claim whose process died frees itself: the revision can be retried
REPLAY_WAIT_SECONDS = 5.0  # a turn takes milliseconds; the model-free loop never waits long
MAX_INTERNAL = 12  # internal steps continued per journal turn; the step budget bounds it anyway


def rate_guard(*, client_id: str) -> None:
    limit = settings.AGENT_RATE_PER_MINUTE
    if not limit:
        return
    window = int(time.time() // 60)
    key = f"agent:rate:{client_id}:{window}"
    cache.add(key, 0, 90)
    try:
        count = cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, 90)
        count = 1
    if count > limit:
        retry = 60 - int(time.time() % 60)
        raise RateLimited(
            f"More than {limit} agent turns a minute; retry in {retry} s.", retry_after=retry
        )


def agent_act(
    request: AgentActRequest, *, idempotency_key: str | None, client_id: str
) -> AgentActResponse:
    """One turn of the loop for ``client_id``. A continue must carry a state signed for this
    client; the same Idempotency-Key and body get the same response again. The new state is
    unsigned: the caller signs it for the client (agent.integrity)."""
    if isinstance(request, AgentActInitRequest):
        started = time.perf_counter()
        outcome = start(request.journal_entry, config=EngineConfig.from_settings())
        _observe("init", outcome, started, entry=request.journal_entry.text)
        return outcome.response
    _check_continuable(request.state, client_id=client_id)
    return _continue(request, idempotency_key=idempotency_key, client_id=client_id)


def journal_turn(
    request: AgentActRequest, *, client_id: str, form_token: str | None
) -> AgentActResponse:
    """The journal page's turn: ``request`` (the entry, or the answer to the open question),
    then the internal steps after it, until the agent asks the writer or finishes. Each step is
    a turn as the API's are (rate guard, claims, metrics). ``form_token``: the question form's
    token, so that the same form sent twice (a double click) replays the first send's steps
    instead of finding the question already answered."""
    keys = (f"journal-page:{form_token}:{n}" if form_token else None for n in count())
    key = next(keys)
    rate_guard(client_id=client_id)
    response = _waiting(partial(agent_act, request, idempotency_key=key, client_id=client_id), key)
    for _ in range(MAX_INTERNAL):
        if response.complete or isinstance(response.action, AskUserAction):
            break
        # The state is the one this call just made for this client: there is no signature to
        # check, and nothing to check it against.
        internal = AgentActStepRequest(mode="continue", state=response.state)
        key = next(keys)
        rate_guard(client_id=client_id)
        response = _waiting(
            partial(_continue, internal, idempotency_key=key, client_id=client_id), key
        )
    return response


def _waiting(turn: Callable[[], AgentActResponse], key: str | None) -> AgentActResponse:
    """``turn()``; while an earlier request with the same Idempotency-Key ``key`` is still
    being worked on, wait (up to REPLAY_WAIT_SECONDS) to replay its answer instead."""
    deadline = time.monotonic() + REPLAY_WAIT_SECONDS
    while True:
        try:
            return turn()
        except RevisionInProgress:
            if key is None or time.monotonic() >= deadline:
                raise
            time.sleep(0.1)


def _check_continuable(state: AgentState, *, client_id: str) -> None:
    # Signed for another client is refused as tampering is: same code, status and words, so
    # the answer does not tell whether a state exists for someone else.
    if not verify(state, client_id=client_id):
        raise IntegrityMismatch(
            "State integrity check failed: send the state exactly as the server returned it."
        )
    if state.exit_flags.get("complete"):
        if state.exit_flags.get("budget"):
            raise BudgetExhausted("This session used its budget and is complete.")
        raise StateComplete("This session is already complete.")


def _continue(
    request: AgentActStepRequest, *, idempotency_key: str | None, client_id: str
) -> AgentActResponse:
    """Continue a state this client may continue: once per revision, or the same answer again
    for the same Idempotency-Key and body."""
    started = time.perf_counter()
    state = request.state
    # Claims and replays are per client as well as per revision: a state reaching the claim has
    # verified for this client, and the namespace keeps anyone else from ever taking (and
    # burning) the owner's revision, whatever a future check lets through.
    base = f"agent:{client_id}:{state.state_id}:{state.revision}"
    idem_key = fingerprint = None
    if idempotency_key:
        idem_key, fingerprint = _idempotency_key(base, idempotency_key), _fingerprint(request)
        replay = _cached_response(idem_key, fingerprint)
        if replay is not None:
            return replay
    claim = _claim(base, revision=state.revision)
    try:
        outcome = step(state, request.user_event, config=EngineConfig.from_settings())
    except Exception:
        cache.delete(claim)  # nothing happened: the client may retry this revision
        raise
    if idem_key:
        # Stored before the revision is marked done, so that a resend waiting on the claim
        # finds the answer rather than a stale revision. The response is unsigned: signing is
        # deterministic (agent.integrity), so the replay, signed again for the same client, is
        # the same body byte for byte.
        cached = {"request": fingerprint, "response": outcome.response}
        cache.set(idem_key, cached, settings.AGENT_IDEMPOTENCY_TTL)
    cache.set(claim, "done", CLAIM_TTL)
    _observe("continue", outcome, started, entry=state.journal_entry.text)
    return outcome.response


def _idempotency_key(base: str, key: str) -> str:
    return f"{base}:idem:{hashlib.sha256(key.encode()).hexdigest()[:32]}"


def _fingerprint(request: AgentActStepRequest) -> str:
    canonical = json.dumps(request.model_dump(mode="json"), sort_keys=True)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _cached_response(idem_key: str, fingerprint: str) -> AgentActResponse | None:
    """The key replays one request: its cached answer carries the request's fingerprint, and a
    different body under the same key is refused rather than answered with the first."""
    cached = cache.get(idem_key)
    if not isinstance(cached, dict):
        return None
    if cached["request"] != fingerprint:
        raise IdempotencyKeyReused(
            "This Idempotency-Key was already used with a different request body; "
            "send a new key for a new request.",
            fields={"Idempotency-Key": ["Already used with a different request body."]},
        )
    response: AgentActResponse = cached["response"]
    return response


def _claim(base: str, *, revision: int) -> str:
    """Take the revision for this request. The first continue for a revision wins; cache.add
    is atomic (primary key in the database cache, SET NX in Redis), so two processes cannot
    both claim it."""
    claim = f"{base}:claim"
    if not cache.add(claim, "pending", PENDING_TTL):
        if cache.get(claim) == "done":
            raise StaleRevision(
                f"Revision {revision} of this state was already continued; send the latest state."
            )
        raise RevisionInProgress(f"Another request is continuing revision {revision}.")
    return claim


def _observe(mode: str, outcome: TurnOutcome, started: float, *, entry: str) -> None:
    latency_ms = (time.perf_counter() - started) * 1000
    reduction = outcome.entropy_before - outcome.entropy_after
    metrics.observe_turn(
        mode=mode,
        action_type=outcome.action_type,
        exit_reason=outcome.exit_reason,
        latency_ms=latency_ms,
        entropy_reduction=reduction,
    )
    if outcome.guard_level != "none":
        metrics.GUARDRAIL.labels(level=outcome.guard_level, where=mode).inc()
    logger.info("agent_turn %s", json.dumps(_turn_log(outcome, entry, latency_ms), sort_keys=True))


def _turn_log(outcome: TurnOutcome, entry: str, latency_ms: float) -> dict[str, object]:
    """The per-turn log line's fields: ids, figures and keyed hashes, never the text."""
    state = outcome.response.state
    action = outcome.response.action
    ask = action if isinstance(action, AskUserAction) else None
    return {
        "state_id": str(state.state_id),
        "revision": state.revision,
        "action_type": outcome.action_type,
        "evi_bits": round(outcome.evi_bits, 4),
        "exit_reason": outcome.exit_reason,
        "seed": outcome.seed,
        "entry_sha": text_hash(entry),
        "question_sha": text_hash(ask.question) if ask else "-",
        "targets": ",".join(str(t)[:8] for t in ask.targets) if ask else "-",
        "top2": [round(p, 3) for p in outcome.top2],
        "merges": outcome.merges,
        "entropy_reduction_bits": round(outcome.entropy_before - outcome.entropy_after, 4),
        "latency_ms": round(latency_ms, 2),
    }
