"""Optional request rates for the API, per user and per anonymous address.

Off unless configured (``API_THROTTLE_USER`` / ``API_THROTTLE_ANON``, e.g. ``100/minute``): a
throttle costs a cache read and write on every request, which is the database when Redis is not
configured. The rate is read from settings at each request, so a change needs no code reload.
The agent's public endpoints keep their own limits (``AGENT_RATE_PER_MINUTE``) as well.
"""

from __future__ import annotations

from django.conf import settings
from rest_framework.throttling import AnonRateThrottle, UserRateThrottle


class UserThrottle(UserRateThrottle):
    def get_rate(self) -> str | None:
        return settings.API_THROTTLE_USER or None  # None: DRF lets every request through


class AnonThrottle(AnonRateThrottle):
    def get_rate(self) -> str | None:
        return settings.API_THROTTLE_ANON or None
