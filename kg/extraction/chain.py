"""The extractor chain: the CLI (or ``IV_SCRIPT_PATH``), then Grok, then the offline heuristic.

Each stage runs only when the previous one failed or found nothing. Logs carry commands, exit
codes, error classes, output lengths and counts, never the text being extracted from nor what a
model said about it.
"""

from __future__ import annotations

import json
import logging
import subprocess
import time
from collections.abc import Mapping
from dataclasses import replace

from django.conf import settings

from kg.extraction.grounding import ground
from kg.extraction.learned import LearnedExtractor
from kg.extraction.parse import ParseError, parse_extraction
from kg.extraction.phrases import strip_sources
from kg.extraction.prompt import build_prompt, prompt_hash
from kg.extraction.types import Extraction
from legacymind.errors import Unavailable
from legacymind.providers import chat

logger = logging.getLogger("kg.extract")
NO_PROVIDER = "none"  # the provider of an extraction from a text with nothing to read
UNAVAILABLE = "No extraction provider is available right now; try again later."


class ExtractionUnavailable(Unavailable):
    error_code = "extraction_unavailable"


class _StageFailed(Exception):
    pass


def _fail(
    cmd: str, code: int | None, error: str, started: float, *, stdout: str = "", stderr: str = ""
) -> None:
    """DEBUG ``kg.extract_fail``: what failed and how much it printed, never what. Spec 000 asked
    for 500-character snippets of stdout/stderr; any answer is derived from the thought (private
    ones included) and a CLI may echo its prompt, so only lengths are kept, as chat.run_cli
    does. ``error`` must name a class or a condition, never carry output."""
    logger.debug(
        "kg.extract_fail %s",
        json.dumps(
            {
                "cmd": cmd,
                "code": code,
                "error": error,
                "stdout_chars": len(stdout),
                "stderr_chars": len(stderr),
                "latency_ms": int((time.monotonic() - started) * 1000),
            }
        ),
    )


def _cli_stage(prompt: str, environ: Mapping[str, str] | None) -> Extraction:
    started = time.monotonic()
    try:
        config = chat.cli_config(environ, script_override=True)
    except chat.ChatError as exc:
        _fail("cli", None, str(exc), started)  # the configuration's fault, no output yet
        raise _StageFailed(f"cli: {exc}") from exc
    cmd = config.command[0]
    # Our own subprocess call rather than chat.run_cli: the failure log names the exit code,
    # which run_cli folds into one exception message.
    try:
        proc = subprocess.run(
            [*config.command, *config.args],
            input=prompt,
            capture_output=True,
            # A CLI printing bytes that are not UTF-8 gives unparseable text (the next stage
            # runs), not a UnicodeDecodeError that ends the chain.
            encoding="utf-8",
            errors="replace",
            timeout=config.timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        _fail(cmd, None, f"timeout after {config.timeout}s", started)
        raise _StageFailed(f"cli: {cmd!r} timed out after {config.timeout}s") from exc
    except OSError as exc:
        _fail(cmd, None, type(exc).__name__, started)
        raise _StageFailed(f"cli: {cmd!r} could not start ({type(exc).__name__})") from exc
    if proc.returncode != 0:
        _fail(cmd, proc.returncode, "nonzero exit", started, stdout=proc.stdout, stderr=proc.stderr)
        raise _StageFailed(f"cli: {cmd!r} exited {proc.returncode}")
    try:
        entities, edges, dropped = parse_extraction(proc.stdout)
    except ParseError as exc:
        # Not the ParseError's message: a schema error quotes the offending value.
        _fail(
            cmd, proc.returncode, "invalid output", started, stdout=proc.stdout, stderr=proc.stderr
        )
        raise _StageFailed(f"cli: {cmd!r} answered no valid extraction") from exc
    if dropped:
        logger.debug("kg.extract_dropped_edges provider=cli count=%d", dropped)
    latency = int((time.monotonic() - started) * 1000)
    return Extraction("cli", config.model, entities, edges, latency)


def _grok_stage(prompt: str, environ: Mapping[str, str] | None) -> Extraction:
    started = time.monotonic()
    try:
        answer = chat.run_grok(prompt, temperature=0.0, environ=environ)
    except chat.ChatError as exc:
        status = getattr(exc.__cause__, "status_code", None)
        _fail("grok", status, str(exc), started)  # ChatError messages name classes, not text
        raise _StageFailed(f"grok: {exc}") from exc
    try:
        entities, edges, dropped = parse_extraction(answer.text)
    except ParseError as exc:
        _fail("grok", 200, "invalid output", started, stdout=answer.text)
        raise _StageFailed("grok: answered no valid extraction") from exc
    if dropped:
        logger.debug("kg.extract_dropped_edges provider=grok count=%d", dropped)
    return Extraction("grok", answer.model, entities, edges, answer.latency_ms)


def heuristic() -> LearnedExtractor:
    """The offline stage: the rules' candidates, kept or added by the learned scorer."""
    return LearnedExtractor(
        max_entities=settings.IV_HEURISTIC_MAX_ENTITIES,
        max_edges=settings.IV_HEURISTIC_MAX_EDGES,
        entity_conf=settings.KG_HEURISTIC_ENTITY_CONFIDENCE,
        edge_conf=settings.KG_HEURISTIC_EDGE_CONFIDENCE,
    )


def extract(
    text: str, *, thought_id: object = None, environ: Mapping[str, str] | None = None
) -> Extraction:
    """Run the chain on ``text``. Raises :class:`ExtractionUnavailable` only when every enabled
    stage failed and the heuristic fallback is disabled."""
    started = time.monotonic()
    body = strip_sources(text).strip()
    if not body:
        # Nothing but whitespace and citations: a model asked about an empty text can only
        # invent what it answers, and each call may cost a paid request.
        return _logged(Extraction(NO_PROVIDER, ""), thought_id=thought_id, started=started)
    limit = settings.KG_EXTRACT_MAX_CHARS
    prompt = build_prompt(body[:limit], truncated=len(body) > limit)
    failures: list[str] = []
    result: Extraction | None = None
    stages = [("cli", _cli_stage)]
    refusal = chat.grok_refusal(environ)
    if refusal is None:
        stages.append(("grok", _grok_stage))
    else:
        failures.append(f"grok: {refusal}")
    grounded = settings.KG_EXTRACT_GROUNDED
    for name, stage in stages:
        try:
            result = stage(prompt, environ)
        except _StageFailed as exc:
            failures.append(str(exc))
            continue
        if grounded:
            result = ground(result, body)
            if result.empty:
                failures.append(f"{name}: nothing in its answer is written in the text")
        if not result.empty:
            break
    if (result is None or result.empty) and settings.IV_HEURISTIC_FALLBACK:
        result = heuristic().extract(body)
    if result is None:
        # The stages' failures name the server's configuration (commands, timeouts, the Grok
        # error class, settings): operators read them here, users get a plain sentence.
        logger.warning(
            "kg.extract_unavailable %s",
            json.dumps(
                {
                    "thought_id": str(thought_id) if thought_id else None,
                    "failures": failures,
                    "heuristic_fallback": "disabled (IV_HEURISTIC_FALLBACK=0)",
                }
            ),
        )
        raise ExtractionUnavailable(UNAVAILABLE)
    return _logged(
        replace(result, prompt_hash=prompt_hash(prompt)), thought_id=thought_id, started=started
    )


def _logged(result: Extraction, *, thought_id: object, started: float) -> Extraction:
    """The result with the chain's latency, logged by counts (never the text)."""
    latency = int((time.monotonic() - started) * 1000)
    result = replace(result, latency_ms=latency)
    logger.info(
        "kg.extract %s",
        json.dumps(
            {
                "thought_id": str(thought_id) if thought_id else None,
                "provider": result.provider,
                "model": result.model,
                "entities": len(result.entities),
                "edges": len(result.edges),
                "latency_ms": latency,
            }
        ),
    )
    return result
