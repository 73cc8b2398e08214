"""Agent error codes (stable; clients switch on them)."""

from __future__ import annotations

from rest_framework import status

from legacymind.errors import Conflict, ServiceError


class IntegrityMismatch(Conflict):
    error_code = "integrity_mismatch"


class StaleRevision(Conflict):
    error_code = "stale_revision"


class RevisionInProgress(Conflict):
    error_code = "revision_in_progress"


class StateComplete(Conflict):
    error_code = "state_complete"


class AnswerMismatch(ServiceError):
    status_code = status.HTTP_410_GONE
    error_code = "answer_mismatch"


class AnswerRequired(ServiceError):
    error_code = "answer_required"


class BudgetExhausted(ServiceError):
    status_code = status.HTTP_429_TOO_MANY_REQUESTS
    error_code = "budget_exhausted"


class RateLimited(ServiceError):
    status_code = status.HTTP_429_TOO_MANY_REQUESTS
    error_code = "rate_limited"

    def __init__(self, detail: str, *, retry_after: int) -> None:
        super().__init__(detail, fields={"retry_after": retry_after})
        self.retry_after = retry_after


class ExcavationIncomplete(Conflict):
    error_code = "excavation_incomplete"


class GuardrailTriggered(ServiceError):
    """v2 has no guardrail exit in its contract: the request is refused with crisis contacts."""

    status_code = status.HTTP_422_UNPROCESSABLE_ENTITY
    error_code = "guardrail"
