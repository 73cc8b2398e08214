"""Load the settings in a fresh interpreter, as a deployment would, and run a snippet there.

The environment is clean and production-like (secrets set, DEBUG off) and DATABASE_URL points
at a closed port: loading settings never connects, so no database is needed or started.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NO_DB = "postgres://nobody@127.0.0.1:9/none"


def settings_process(
    code: str, *, cwd: Path = ROOT, **overrides: str | None
) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a new process (in ``cwd``, the project importable from anywhere);
    ``overrides`` set variables, ``None`` removes one."""
    return _clean_run([sys.executable, "-c", code], overrides, cwd=cwd)


def manage_process(*args: str, **overrides: str | None) -> subprocess.CompletedProcess[str]:
    """Run ``manage.py`` with ``args`` in the same clean environment."""
    return _clean_run([sys.executable, "manage.py", *args], overrides)


def _clean_run(
    argv: list[str], overrides: dict[str, str | None], *, cwd: Path = ROOT
) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/tmp"),
        "DJANGO_SETTINGS_MODULE": "legacymind.settings",
        "DJANGO_SECRET_KEY": "s3cret-for-tests",
        "AGENT_STATE_SECRET": "agent-s3cret-for-tests",
        "DATABASE_URL": NO_DB,
        "PYTHONPATH": str(ROOT),
    }
    for name, value in overrides.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return subprocess.run(
        argv,
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
