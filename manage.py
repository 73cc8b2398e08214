#!/usr/bin/env python
from __future__ import annotations

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "legacymind.settings")
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        # Loading the settings reads the environment: a bad value is the operator's to fix,
        # and the message naming the variable is all they need, not a page of traceback.
        settings.INSTALLED_APPS  # noqa: B018
    except ImproperlyConfigured as exc:
        sys.exit(f"Configuration error: {exc}")
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
