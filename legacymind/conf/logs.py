"""Logging filters that ``settings.LOGGING`` names."""

from __future__ import annotations

import logging


class AsWarningWithoutTraceback(logging.Filter):
    """Log the record as one WARNING line. For ``django.security.DisallowedHost``: every
    scanner that sends a foreign Host header got an ERROR with a 15-line traceback of Django's
    own host check, which says nothing the message does not. Likewise for
    ``django.security.DisallowedModelAdminLookup``, an admin URL filter refused with a 400."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.levelno, record.levelname = logging.WARNING, "WARNING"
        record.exc_info, record.exc_text = None, None
        return True
