"""HMAC over the round-tripped state: the client carries the state, the server trusts only what
it signed (spec 004 §7).

The key is derived per client (HMAC(AGENT_STATE_SECRET, client_id)), so a state verifies only
for the user it was signed for: another signed-in user who gets hold of it (a shared link, a
copied page) cannot continue it, and is refused exactly as a tampered state. Deriving the key
rather than adding a field keeps the state's JSON, the spec's wire format, unchanged."""

from __future__ import annotations

import hashlib
import hmac
import json

from django.conf import settings
from pydantic import BaseModel

from agent.schemas import AgentState, ExcavationState

Signed = AgentState | ExcavationState


def canonical(state: BaseModel) -> bytes:
    data = state.model_dump(mode="json", exclude={"integrity"})
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _key(client_id: str) -> bytes:
    # The prefix keeps this derivation apart from any other use of the same secret.
    message = b"agent-state:" + client_id.encode()
    return hmac.new(settings.AGENT_STATE_SECRET.encode(), message, hashlib.sha256).digest()


def _digest(state: Signed, client_id: str) -> str:
    return hmac.new(_key(client_id), canonical(state), hashlib.sha256).hexdigest()


def sign(state: Signed, *, client_id: str) -> None:
    """Set ``state.integrity`` to the state's signature for ``client_id``."""
    state.integrity = None
    state.integrity = _digest(state, client_id)


def verify(state: Signed, *, client_id: str) -> bool:
    if not state.integrity:
        return False
    expected = _digest(state, client_id)
    # As bytes: compare_digest refuses a str with non-ASCII characters (a TypeError, a 500) and
    # the client may send anything here.
    return hmac.compare_digest(expected.encode(), str(state.integrity).encode())
