"""Chat models behind one call: the Gemini CLI (or any command) as a subprocess fed on stdin,
then Grok or any OpenAI-compatible chat endpoint over HTTP. Callers supply their own offline
fallback (heuristic extractor, deterministic composer) when :func:`complete` raises.

Env precedence (specs/README.md, spec 000 Q&A):
``IV_CLI_CMD`` / ``IV_CLI_ARGS_JSON`` / ``IV_MODELS`` -> ``IV_SYNTH_CLI_CMD`` /
``IV_SYNTH_CLI_ARGS_JSON`` / ``GEMINI_MODEL`` -> defaults ``gemini``, ``["-m","{model}"]``,
``gemini-2.5-pro``. ``IV_ALLOW_GROK`` (default true), ``GROK_API_KEY``, ``GROK_MODEL``,
``GROK_BASE_URL``. Read at call time so a deployment can change them without a code change.

Inside :func:`cli_breaker` a CLI that timed out or could not start is not run again (opt-in, for
a use case that calls the chain several times).
"""

from __future__ import annotations

import json
import logging
import os
import shlex
import subprocess
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from legacymind.errors import Unavailable
from legacymind.providers import chat_env

if TYPE_CHECKING:
    import openai

logger = logging.getLogger("legacymind.chat")

DEFAULT_CLI = "gemini"
DEFAULT_ARGS = ["-m", "{model}"]
DEFAULT_MODEL = "gemini-2.5-pro"
DEFAULT_GROK_MODEL = "grok-2-latest"
DEFAULT_GROK_URL = "https://api.x.ai/v1"
# A retry needs this much of GROK_TIMEOUT left to be worth sending.
MIN_RETRY_SECONDS = 1.0


class ChatError(Unavailable):
    error_code = "chat_unavailable"


# The commands that timed out or could not start inside the current cli_breaker() block; None
# outside one. A context variable, not an argument: the KG extraction of an inner-voice answer
# reaches the CLI through an after-commit task whose signature cannot carry it.
_broken: ContextVar[set[tuple[str, ...]] | None] = ContextVar("chat_cli_broken", default=None)


@contextmanager
def cli_breaker() -> Iterator[None]:
    """Within this block, a CLI command that timed out or could not start is skipped (its
    stage fails at once, so the chain goes on to Grok or the caller's fallback) instead of run
    again: a hanging CLI costs one timeout per block, not one per call. Only callers that enter
    it are affected; a CLI that failed quickly (an exit code, bad output) is still retried."""
    token = _broken.set(set())
    try:
        yield
    finally:
        _broken.reset(token)


@dataclass(frozen=True)
class ChatResult:
    text: str
    provider: str  # "cli", "grok"
    model: str
    latency_ms: int
    attempts: list[dict[str, object]] = field(default_factory=list)


@dataclass(frozen=True)
class CliConfig:
    command: list[str]
    args: list[str]
    model: str
    timeout: float


def _env(environ: Mapping[str, str], *names: str) -> str:
    for name in names:
        value = environ.get(name, "").strip()
        if value:
            return value
    return ""


def _json_list(raw: str, name: str) -> list[str]:
    try:
        return chat_env.json_list(name, raw)
    except ValueError as exc:
        raise ChatError(str(exc)) from exc


def cli_config(
    environ: Mapping[str, str] | None = None, *, script_override: bool = False
) -> CliConfig:
    """Resolve the CLI command, args and model. ``script_override`` honours ``IV_SCRIPT_PATH``."""
    env = os.environ if environ is None else environ
    models = _env(env, "IV_MODELS")
    model = models.split(",")[0].strip() if models else _env(env, "GEMINI_MODEL") or DEFAULT_MODEL
    if env.get("IV_CLI_ARGS_JSON"):
        args = _json_list(env["IV_CLI_ARGS_JSON"], "IV_CLI_ARGS_JSON")
    elif env.get("IV_SYNTH_CLI_ARGS_JSON"):
        args = _json_list(env["IV_SYNTH_CLI_ARGS_JSON"], "IV_SYNTH_CLI_ARGS_JSON")
    else:
        args = list(DEFAULT_ARGS)
    script = _env(env, "IV_SCRIPT_PATH") if script_override else ""
    if script:
        command, args = shlex.split(script), []
    else:
        command = shlex.split(_env(env, "IV_CLI_CMD", "IV_SYNTH_CLI_CMD") or DEFAULT_CLI)
    broken = _broken.get()
    if broken is not None and tuple(command) in broken:
        # Raised here, where every CLI stage starts (the KG extractor's own included), so that
        # none of them waits for it again.
        raise ChatError(f"CLI {command[0]!r} skipped: it timed out or could not start earlier")
    timeout = _seconds("IV_CLI_TIMEOUT", env)
    return CliConfig(command, [a.replace("{model}", model) for a in args], model, timeout)


def _seconds(name: str, env: Mapping[str, str]) -> float:
    """A timeout variable; a bad one is the stage's failure, naming the variable (the chain
    then goes on to its next stage), never an exception the caller does not expect."""
    try:
        return chat_env.seconds(name, env)
    except ValueError as exc:
        raise ChatError(str(exc)) from exc


def run_cli(prompt: str, config: CliConfig) -> ChatResult:
    """Run the CLI with the prompt on stdin; its stdout (UTF-8) is the answer.

    Its failure is logged without its output: a CLI may echo its input, and the prompt holds a
    user's words (an inner-voice question, a journal entry)."""
    started = time.monotonic()
    cmd = [*config.command, *config.args]
    try:
        proc = subprocess.run(
            cmd,
            input=prompt.encode(),
            capture_output=True,
            timeout=config.timeout,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        _cli_fail(config, None, type(exc).__name__, started)
        broken = _broken.get()
        if broken is not None:
            broken.add(tuple(config.command))
        raise ChatError(f"CLI {config.command[0]!r} failed: {type(exc).__name__}") from exc
    try:
        answer = proc.stdout.decode("utf-8").strip()
    except UnicodeDecodeError as exc:
        _cli_fail(config, proc.returncode, "stdout not UTF-8", started, proc)
        raise ChatError(f"CLI {config.command[0]!r} printed output that is not UTF-8") from exc
    if proc.returncode != 0 or not answer:
        _cli_fail(config, proc.returncode, "no answer", started, proc)
        raise ChatError(f"CLI {config.command[0]!r} exited {proc.returncode} with no answer")
    return ChatResult(answer, "cli", config.model, int((time.monotonic() - started) * 1000))


def _cli_fail(
    config: CliConfig,
    code: int | None,
    error: str,
    started: float,
    proc: subprocess.CompletedProcess[bytes] | None = None,
) -> None:
    """DEBUG ``chat.cli_fail``: what failed and how much it printed, never what."""
    logger.debug(
        "chat.cli_fail %s",
        json.dumps(
            {
                "cmd": config.command[0],
                "code": code,
                "error": error,
                "stdout_bytes": len(proc.stdout) if proc else 0,
                "stderr_bytes": len(proc.stderr) if proc else 0,
                "latency_ms": int((time.monotonic() - started) * 1000),
            }
        ),
    )


def grok_refusal(environ: Mapping[str, str] | None = None) -> str | None:
    """Why the Grok stage must not run, or None when it may. A value of ``IV_ALLOW_GROK``
    that is neither yes nor no keeps Grok off: a mistyped "false" must not send a user's text
    to a third party (the settings refuse it at start-up too)."""
    env = os.environ if environ is None else environ
    try:
        allowed = chat_env.grok_allowed(env)
    except ValueError as exc:
        return f"{exc}, so Grok stays off"
    if not allowed:
        return "disabled by IV_ALLOW_GROK"
    if not env.get("GROK_API_KEY"):
        return "disabled: no GROK_API_KEY"
    return None


def run_grok(
    prompt: str,
    *,
    system: str = "",
    temperature: float = 0.2,
    environ: Mapping[str, str] | None = None,
) -> ChatResult:
    """One chat-completions call to Grok or any OpenAI-compatible endpoint. ``GROK_TIMEOUT``
    bounds the whole call, retry included; any answer that is not a usable chat completion is
    a :class:`ChatError`, so the caller's fallback runs."""
    import openai

    env = os.environ if environ is None else environ
    model = env.get("GROK_MODEL") or DEFAULT_GROK_MODEL
    budget = _seconds("GROK_TIMEOUT", env)
    # No SDK retries: the SDK would give a timed-out request a second full GROK_TIMEOUT, so a
    # hanging endpoint made the user wait twice the setting. _grok_call retries itself,
    # within the budget.
    client = openai.OpenAI(
        api_key=env.get("GROK_API_KEY", ""),
        base_url=env.get("GROK_BASE_URL") or DEFAULT_GROK_URL,
        max_retries=0,
    )
    messages: list[Any] = ([{"role": "system", "content": system}] if system else []) + [
        {"role": "user", "content": prompt}
    ]
    started = time.monotonic()
    response = _grok_call(
        client, model=model, messages=messages, temperature=temperature, deadline=started + budget
    )
    latency = int((time.monotonic() - started) * 1000)
    text, answered = _grok_answer(response, default_model=model)
    return ChatResult(text, "grok", answered, latency)


def _grok_call(
    client: openai.OpenAI, *, model: str, messages: list[Any], temperature: float, deadline: float
) -> object:
    """The request, and one retry after a quick transient failure (connection refused or reset,
    429, 5xx) while the budget lasts. A timeout is not retried: it has used the budget up."""
    import openai

    transient = (openai.APIConnectionError, openai.RateLimitError, openai.InternalServerError)
    for attempt in (1, 2):
        try:
            response: object = client.chat.completions.create(
                model=model,
                messages=messages,
                temperature=temperature,
                timeout=max(deadline - time.monotonic(), 0.001),
            )
            return response
        except openai.OpenAIError as exc:
            again = (
                attempt == 1
                and isinstance(exc, transient)
                and not isinstance(exc, openai.APITimeoutError)
                and deadline - time.monotonic() > MIN_RETRY_SECONDS
            )
            logger.debug(
                "chat.grok_fail model=%s error=%s retry=%s", model, type(exc).__name__, again
            )
            if not again:
                raise ChatError(f"Grok call failed: {type(exc).__name__}") from exc
    raise AssertionError("unreachable: the second attempt returns or raises")


def _grok_answer(response: object, *, default_model: str) -> tuple[str, str]:
    """The answer's text and model. The SDK does not validate what it parses: an HTML page sent with 200
    (a proxy, a captive portal, a GROK_BASE_URL naming a website) comes back as a ``str``, and
    JSON of the wrong shape as a model whose fields hold anything."""
    from openai.types.chat import ChatCompletion

    if not isinstance(response, ChatCompletion):
        raise ChatError(f"Grok answered with no chat completion ({type(response).__name__})")
    try:
        content = response.choices[0].message.content if response.choices else None
    except (AttributeError, IndexError, KeyError, TypeError) as exc:
        raise ChatError(
            f"Grok answered a malformed chat completion ({type(exc).__name__})"
        ) from exc
    text = content.strip() if isinstance(content, str) else ""
    if not text:
        raise ChatError("Grok returned an empty answer")
    model = response.model if isinstance(response.model, str) and response.model else ""
    return text, model or default_model


def complete(
    prompt: str,
    *,
    system: str = "",
    temperature: float = 0.2,
    script_override: bool = False,
    environ: Mapping[str, str] | None = None,
) -> ChatResult:
    """CLI first, then Grok when allowed; raises :class:`ChatError` when every stage fails.

    Never logs the prompt: it may hold a user's words.
    """
    failures: list[str] = []
    full_prompt = f"{system}\n\n{prompt}" if system else prompt
    try:
        return run_cli(full_prompt, cli_config(environ, script_override=script_override))
    except ChatError as exc:
        failures.append(f"cli: {exc}")
    refusal = grok_refusal(environ)
    if refusal is None:
        try:
            return run_grok(prompt, system=system, temperature=temperature, environ=environ)
        except ChatError as exc:
            failures.append(f"grok: {exc}")
    else:
        failures.append(f"grok: {refusal}")
    raise ChatError("no chat provider answered (" + "; ".join(failures) + ")")
