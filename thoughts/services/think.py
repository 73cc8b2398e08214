"""The think pipeline (``thought_think``): mode, embedding, continuity, injection,
verification and analysis, then the one write (``thought_create``)."""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

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


def thought_think(*, owner: User, params: ThinkParams) -> ThinkResult:
    """Select the mode, embed, resolve links, inject memories, verify, analyse, and store the
    thought in one transaction. An embedding failure raises (503) before anything is written."""
    timer = _Timer()
    choice = mode_select(content=params.content, hint=params.hint)
    default_scale, default_significance = MODE_DEFAULTS[choice.mode]
    scale = default_scale if params.injection_scale is None else params.injection_scale
    significance = default_significance if params.significance is None else params.significance
    thought_id = params.thought_id or uuid.uuid4()
    if params.thought_id:
        thought_id_claim(thought_id=thought_id, owner=owner)
    continuity = continuity_resolve(
        owner=owner,
        thought_id=thought_id,
        links=params.links,
        session_id=params.session_id,
        chain_id=params.chain_id,
        confidence=params.confidence,
    )
    timer.mark("links")

    hypothesis = params.hypothesis if params.needs_verification else None
    provider = get_provider()
    texts = [params.content] if hypothesis is None else [params.content, hypothesis]
    # One call for the thought and its hypothesis: both succeed or nothing is stored.
    vectors = provider.embed(texts)
    timer.mark("embed")

    injection = memories_inject(
        provider=provider,
        vector=vectors[0],
        scale=scale,
        mode=choice.mode,
        submode=params.submode,
        viewer=owner,
    )
    timer.mark("inject")
    verification = None
    if hypothesis is not None:
        verification = hypothesis_verify(
            provider=provider,
            vector=vectors[1],
            request=VerifyRequest(
                hypothesis=hypothesis,
                top_k=params.verify_top_k,
                min_similarity=params.min_similarity,
                evidence_limit=params.evidence_limit,
                patterns=params.contradiction_patterns,
            ),
            viewer=owner,
        )
        timer.mark("verify")
    analysis = None
    if settings.SURR_THINK_ENHANCE and choice.conversational:
        analysis = framework_analyze(text=params.content, submode=params.submode)
        timer.mark("frameworks")

    thought = thought_create(
        owner=owner,
        content=params.content,
        origin=choice.origin,
        embedding=(provider, vectors[0]),
        injected=injection.memories,
        id=thought_id,
        mode=choice.mode,
        injection_scale=injection.scale,
        significance=significance,
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
        verification=verification if settings.SURR_PERSIST_VERIFICATION else None,
    )
    timer.mark("store")
    logger.info(
        "think thought=%s mode=%s scale=%d injected=%d verified=%s ms=%s",
        thought.id,
        choice.mode,
        injection.scale,
        len(injection.memories),
        hypothesis is not None,
        timer.marks,
    )
    return ThinkResult(
        thought=thought,
        choice=choice,
        continuity=continuity,
        injection=injection,
        provider=provider,
        params=params,
        verification=verification,
        timings_ms=timer.marks,
    )
