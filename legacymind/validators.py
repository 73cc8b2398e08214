"""Model and form validators shared by the apps."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError

NUL_MESSAGE = "Null characters are not allowed."  # DRF's CharField says the same


def no_nul(value: Any) -> None:
    """Refuse a JSON value with a NUL character in any key or string, at any depth.

    Postgres' jsonb and text cannot store U+0000: unchecked, such a value reached the database
    and failed there as a 500. DRF's CharField refuses it already; JSON objects need this.
    """
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if "\x00" in item:
                raise ValidationError(NUL_MESSAGE, code="null_characters")
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list | tuple):
            pending.extend(item)
