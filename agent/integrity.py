"""HMAC over the round-tripped state: the client carries the state, the server trusts only what
it signed (spec 004 §7)."""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

from django.conf import settings
from pydantic import BaseModel


def canonical(state: BaseModel) -> bytes:
    data = state.model_dump(mode="json", exclude={"integrity"})
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def sign(state: Any) -> None:
    state.integrity = None
    key = settings.AGENT_STATE_SECRET.encode()
    state.integrity = hmac.new(key, canonical(state), hashlib.sha256).hexdigest()


def verify(state: Any) -> bool:
    if not state.integrity:
        return False
    key = settings.AGENT_STATE_SECRET.encode()
    expected = hmac.new(key, canonical(state), hashlib.sha256).hexdigest()
    # As bytes: compare_digest refuses a str with non-ASCII characters (a TypeError, a 500) and
    # the client may send anything here.
    return hmac.compare_digest(expected.encode(), str(state.integrity).encode())
