"""Agent error codes (stable; clients switch on them).

``fields`` follows the project envelope (field path → list of messages). Machine-readable data a
client acts on (the open question's id, seconds to wait, the guardrail level) travels in
``extra``, which the agent's views add as top-level keys beside the envelope's three.
"""

from __future__ import annotations

from typing import Any

from rest_framework import status

from legacymind.errors import Conflict, ServiceError


class AgentError(ServiceError):
    def __init__(
        self,
        detail: str,
        *,
        fields: dict[str, list[str]] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(detail, fields=fields)
        self.extra = extra or {}


class IntegrityMismatch(AgentError, Conflict):
    error_code = "integrity_mismatch"


class StaleRevision(AgentError, Conflict):
    error_code = "stale_revision"


class RevisionInProgress(AgentError, Conflict):
    error_code = "revision_in_progress"


class StateComplete(AgentError, Conflict):
    error_code = "state_complete"


class AnswerMismatch(AgentError):
    status_code = status.HTTP_410_GONE
    error_code = "answer_mismatch"


class AnswerRequired(AgentError):
    error_code = "answer_required"


class InvalidEvent(AgentError):
    """user_event is present but malformed (400, like any invalid input)."""

    error_code = "invalid"


class IdempotencyKeyReused(AgentError):
    """The key already answered a different body: replaying that answer would be wrong."""

    status_code = status.HTTP_422_UNPROCESSABLE_ENTITY
    error_code = "idempotency_key_reused"


class BudgetExhausted(AgentError):
    status_code = status.HTTP_429_TOO_MANY_REQUESTS
    error_code = "budget_exhausted"


class RateLimited(AgentError):
    status_code = status.HTTP_429_TOO_MANY_REQUESTS
    error_code = "rate_limited"

    def __init__(self, detail: str, *, retry_after: int) -> None:
        super().__init__(detail, extra={"retry_after": retry_after})
        self.retry_after = retry_after


class ExcavationIncomplete(AgentError, Conflict):
    error_code = "excavation_incomplete"


class GuardrailTriggered(AgentError):
    """v2 has no guardrail exit in its contract: the request is refused with crisis contacts."""

    status_code = status.HTTP_422_UNPROCESSABLE_ENTITY
    error_code = "guardrail"
