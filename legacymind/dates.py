"""Date bounds as people write them: ``YYYY-MM-DD`` or an ISO 8601 date-time. One parser for
the API's date filters and the commands' ``--since``, so both read the same values the same
way."""

from __future__ import annotations

from datetime import UTC, datetime, time

from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime


class BadMoment(ValueError):
    """``code``: "invalid" (not a date), "impossible" (well-formed, no such day or time) or
    "out_of_range" (before year 1 or after 9999 once in UTC)."""

    def __init__(self, message: str, *, code: str) -> None:
        super().__init__(message)
        self.code = code


def parse_moment(text: str, *, end_of_day: bool = False) -> datetime:
    """An aware datetime: a date is its whole day's first (or, ``end_of_day``, last) moment in
    the server's time zone; a date-time with an offset is the same instant in UTC, because
    Python reads offsets up to ±23:59 and Postgres refuses any beyond ±15:59 ("time zone
    displacement out of range")."""
    try:
        day = parse_date(text)
        moment = parse_datetime(text) if day is None else None
    except ValueError as exc:  # well-formed but impossible, e.g. 2025-02-30
        raise BadMoment(f"is not a valid date: {exc}", code="impossible") from exc
    if day is not None:
        moment = datetime.combine(day, time.max if end_of_day else time.min)
    if moment is None:
        raise BadMoment("is not a date (YYYY-MM-DD) or datetime", code="invalid")
    if timezone.is_naive(moment):
        return timezone.make_aware(moment)
    try:
        return moment.astimezone(UTC)
    except OverflowError as exc:  # e.g. 0001-01-01T00:00:00+05:00, before year 1 in UTC
        raise BadMoment("is out of range once converted to UTC", code="out_of_range") from exc
