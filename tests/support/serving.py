"""Waiting for a server the test started in a subprocess (gunicorn, runserver)."""

from __future__ import annotations

import subprocess
import time
from typing import Any
from urllib import request
from urllib.error import HTTPError

import pytest


def wait_healthy(
    url: str,
    server: subprocess.Popen[Any],
    *,
    timeout: float,
    what: str,
    unhealthy_ok: bool = False,
) -> None:
    """Return once ``url``/healthz answers 200 (with ``unhealthy_ok``, any answer: a server on
    an unmigrated database is up, but its cache table is not there yet); fail the test if
    ``server`` exits first (with the tail of its stderr) or ``timeout`` seconds pass. The
    caller stops the server (a process group, for runserver's autoreloader)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            request.urlopen(f"{url}/healthz", timeout=2).read()
            return
        except HTTPError:
            if unhealthy_ok:
                return
        except OSError:
            pass
        if server.poll() is not None:  # its stderr is complete: safe to read
            err = server.stderr.read() if server.stderr else ""
            text = err.decode(errors="replace") if isinstance(err, bytes) else err
            pytest.fail(f"{what} exited before it answered: {text[-2000:]}")
        if time.monotonic() > deadline:
            pytest.fail(f"{what} did not answer /healthz within {timeout:g} s")
        time.sleep(0.2)
