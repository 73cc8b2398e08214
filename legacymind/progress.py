"""Progress bars of the management commands."""

from __future__ import annotations

import logging
from contextlib import AbstractContextManager
from typing import Any, cast

from django.conf import settings
from tqdm.contrib.logging import logging_redirect_tqdm


def logs_through_bar() -> AbstractContextManager[None]:
    """While the body runs, the console's log lines (the root logger and every logger the
    settings configure) go out through tqdm, above the bar. Written straight to the console
    they would land in the middle of the bar's line."""
    configured = cast(dict[str, Any], settings.LOGGING)["loggers"]
    return logging_redirect_tqdm(loggers=[logging.getLogger(), *map(logging.getLogger, configured)])
