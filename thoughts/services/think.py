"""The think pipeline (``thought_think``): mode, embedding, continuity, injection,
verification and analysis, then the one write (``thought_create``)."""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from django.conf import settings
from django.contrib.auth.models import User

from legacymind.providers.embeddings import EmbeddingProvider, get_provider
from thoughts.models import Thought
from thoughts.services.write import thought_create
from thoughts.think.continuity import Continuity, continuity_resolve
from thoughts.think.frameworks import framework_analyze
from thoughts.think.injection import Injection, memories_inject
from thoughts.think.modes import MODE_DEFAULTS, ModeChoice, mode_select
from thoughts.think.params import ThinkParams
from thoughts.think.persist import thought_id_claim
from thoughts.think.verification import VerifyRequest, hypothesis_verify

logger = logging.getLogger("thoughts.think")


@dataclass
class ThinkResult:
    thought: Thought
    choice: ModeChoice
    continuity: Continuity
    injection: Injection
    provider: EmbeddingProvider
    params: ThinkParams
    verification: dict[str, Any] | None = None
    timings_ms: dict[str, float] = field(default_factory=dict)


class _Timer:
    def __init__(self) -> None:
        self.marks: dict[str, float] = {}
        self._last = time.perf_counter()

    def mark(self, name: str) -> None:
        now = time.perf_counter()
        self.marks[name] = round((now - self._last) * 1000, 3)
        self._last = now


@dataclass(frozen=True)
class _Mode:
    """The selected mode, the scale and significance it implies, and the thought's id."""

    choice: ModeChoice
    scale: int
    significance: float
    thought_id: uuid.UUID


@dataclass(frozen=True)
class _Embedded:
    provider: EmbeddingProvider
    vectors: np.ndarray  # the thought's vector, then the hypothesis' when there is one
    hypothesis: str | None


def thought_think(*, owner: User, params: ThinkParams) -> ThinkResult:
    """Select the mode, embed, resolve links, inject memories, verify, analyse, and store the
    thought in one transaction. An embedding failure raises (503) before anything is written."""
    timer = _Timer()
    mode = _mode_select(params)
    continuity = _links_resolve(owner=owner, params=params, thought_id=mode.thought_id)
    timer.mark("links")
    embedded = _embed(params)
    timer.mark("embed")
    injection = _inject(owner=owner, params=params, mode=mode, embedded=embedded)
    timer.mark("inject")
    verification = None
    if embedded.hypothesis is not None:
        verification = _verify(
            owner=owner, params=params, embedded=embedded, hypothesis=embedded.hypothesis
        )
        timer.mark("verify")
    analysis = None
    if settings.THINK_ENHANCE and mode.choice.conversational:
        analysis = framework_analyze(text=params.content, submode=params.submode)
        timer.mark("frameworks")
    thought = _store(
        owner=owner,
        params=params,
        mode=mode,
        continuity=continuity,
        embedded=embedded,
        injection=injection,
        verification=verification,
        analysis=analysis,
    )
    timer.mark("store")
    _log(
        thought,
        mode=mode,
        injection=injection,
        verified=embedded.hypothesis is not None,
        timer=timer,
    )
    return ThinkResult(
        thought=thought,
        choice=mode.choice,
        continuity=continuity,
        injection=injection,
        provider=embedded.provider,
        params=params,
        verification=verification,
        timings_ms=timer.marks,
    )


def _mode_select(params: ThinkParams) -> _Mode:
    """The mode, with the injection scale and significance the request leaves to it, and the
    thought's id (the caller's, else a new one)."""
    choice = mode_select(content=params.content, hint=params.hint)
    default_scale, default_significance = MODE_DEFAULTS[choice.mode]
    return _Mode(
        choice=choice,
        scale=default_scale if params.injection_scale is None else params.injection_scale,
        significance=(default_significance if params.significance is None else params.significance),
        thought_id=params.thought_id or uuid.uuid4(),
    )


def _links_resolve(*, owner: User, params: ThinkParams, thought_id: uuid.UUID) -> Continuity:
    """Claim a caller-chosen id, then resolve the session, chain and links."""
    if params.thought_id:
        thought_id_claim(thought_id=thought_id, owner=owner)
    return continuity_resolve(
        owner=owner,
        thought_id=thought_id,
        links=params.links,
        session_id=params.session_id,
        chain_id=params.chain_id,
        confidence=params.confidence,
    )


def _embed(params: ThinkParams) -> _Embedded:
    hypothesis = params.hypothesis if params.needs_verification else None
    provider = get_provider()
    texts = [params.content] if hypothesis is None else [params.content, hypothesis]
    # One call for the thought and its hypothesis: both succeed or nothing is stored.
    return _Embedded(provider, provider.embed(texts), hypothesis)


def _inject(*, owner: User, params: ThinkParams, mode: _Mode, embedded: _Embedded) -> Injection:
    return memories_inject(
        provider=embedded.provider,
        vector=embedded.vectors[0],
        scale=mode.scale,
        mode=mode.choice.mode,
        submode=params.submode,
        viewer=owner,
    )


def _verify(
    *, owner: User, params: ThinkParams, embedded: _Embedded, hypothesis: str
) -> dict[str, Any]:
    return hypothesis_verify(
        provider=embedded.provider,
        vector=embedded.vectors[1],
        request=VerifyRequest(
            hypothesis=hypothesis,
            top_k=params.verify_top_k,
            min_similarity=params.min_similarity,
            evidence_limit=params.evidence_limit,
            patterns=params.contradiction_patterns,
        ),
        viewer=owner,
    )


def _store(
    *,
    owner: User,
    params: ThinkParams,
    mode: _Mode,
    continuity: Continuity,
    embedded: _Embedded,
    injection: Injection,
    verification: dict[str, Any] | None,
    analysis: dict[str, Any] | None,
) -> Thought:
    """The one write: the thought, its links, injected memories and analysis."""
    return thought_create(
        owner=owner,
        content=params.content,
        origin=mode.choice.origin,
        embedding=(embedded.provider, embedded.vectors[0]),
        injected=injection.memories,
        id=mode.thought_id,
        mode=mode.choice.mode,
        injection_scale=injection.scale,
        significance=mode.significance,
        tags=params.tags,
        is_private=params.is_private,
        submode=params.submode,
        session_id=continuity.session_id,
        chain_id=continuity.chain_id,
        confidence=continuity.confidence,
        previous_thought_id=continuity.links["previous_thought_id"],
        revises_thought_id=continuity.links["revises_thought"],
        branch_from_id=continuity.links["branch_from"],
        injected_memories=[item.as_dict() for item in injection.memories],
        enriched_content=injection.enriched,
        framework_enhanced=analysis is not None,
        framework_analysis=analysis,
        verification=verification if settings.THINK_PERSIST_VERIFICATION else None,
    )


def _log(
    thought: Thought, *, mode: _Mode, injection: Injection, verified: bool, timer: _Timer
) -> None:
    logger.info(
        "think thought=%s mode=%s scale=%d injected=%d verified=%s ms=%s",
        thought.id,
        mode.choice.mode,
        injection.scale,
        len(injection.memories),
        verified,
        timer.marks,
    )
