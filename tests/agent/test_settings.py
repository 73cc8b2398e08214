"""AGENT_* settings: the state secret is required in production, bad values fail at start-up."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def load_settings(**env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k != "AGENT_STATE_SECRET"}
    environ.update(env)
    code = "import legacymind.conf.agent as a; print(a.TAU_HIGH, a.MAX_USER_QUERIES)"
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=environ,
        text=True,
        capture_output=True,
        timeout=60,
    )


def test_state_secret_is_required_when_debug_is_off():
    result = load_settings(DJANGO_DEBUG="0")
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert "AGENT_STATE_SECRET" in result.stderr


def test_state_secret_optional_in_debug_and_defaults_are_the_specs():
    result = load_settings(DJANGO_DEBUG="1")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["0.8", "3"]


@pytest.mark.parametrize(("name", "value"), [("TAU_HIGH", "1.5"), ("MAX_STEPS", "many")])
def test_bad_values_fail_naming_the_variable(name, value):
    result = load_settings(DJANGO_DEBUG="1", **{name: value})
    assert result.returncode != 0
    assert name in result.stderr
