"""The formats of the chat providers' variables, in one place for both readers: the settings
check them at start-up (``legacymind.conf.kg``, so nothing here may import Django or DRF) and
``legacymind.providers.chat`` reads them at call time. Each raises ValueError naming the
variable; the readers turn it into their own error."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping

from legacymind.conf.flags import flag

SECONDS_DEFAULT = 60.0
ARGS_VARIABLES = ("IV_CLI_ARGS_JSON", "IV_SYNTH_CLI_ARGS_JSON")
TIMEOUT_VARIABLES = ("IV_CLI_TIMEOUT", "GROK_TIMEOUT")


def seconds(name: str, env: Mapping[str, str]) -> float:
    """A timeout variable: a positive, finite number of seconds, or the default when unset."""
    raw = env.get(name, "").strip()
    if not raw:
        return SECONDS_DEFAULT
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not 0 < value < math.inf:
        raise ValueError(f"{name} must be a positive number of seconds, not {raw!r}")
    return value


def json_list(name: str, raw: str) -> list[str]:
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise ValueError(f"{name} is not valid JSON: {exc}") from exc
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"{name} must be a JSON list of strings")
    return value


def grok_allowed(env: Mapping[str, str]) -> bool:
    """``IV_ALLOW_GROK`` (default yes); a value that is neither yes nor no is refused."""
    return flag("IV_ALLOW_GROK", env.get("IV_ALLOW_GROK", ""), True)


def check(env: Mapping[str, str]) -> None:
    """Every formatted variable at once (start-up)."""
    grok_allowed(env)
    for name in TIMEOUT_VARIABLES:
        seconds(name, env)
    for name in ARGS_VARIABLES:
        if env.get(name):
            json_list(name, env[name])
