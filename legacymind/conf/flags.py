"""Yes/no variables, one rule for the settings' start-up checks (``legacymind.conf.env``) and
the chat variables read at call time (``legacymind.providers.chat_env``). Free of Django, as
the latter must be."""

from __future__ import annotations

YES, NO = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def flag(name: str, raw: str, default: bool) -> bool:
    """``raw``, the value of variable ``name``: empty is ``default``; anything but a yes or a
    no word raises ValueError naming the variable."""
    value = raw.strip().lower()
    if not value:
        return default
    if value in YES:
        return True
    if value in NO:
        return False
    raise ValueError(f"{name}={value!r} is not a boolean (use 1/0, true/false)")
