"""A copy of .env.example left unchanged passes docker-compose's `:?` checks: with DJANGO_DEBUG
off the app must refuse its placeholder secrets at start-up, naming the variable."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.support.settings_process import manage_process, settings_process

EXAMPLE = Path(__file__).resolve().parents[2] / ".env.example"
SECRETS = ("DJANGO_SECRET_KEY", "AGENT_STATE_SECRET")
PRINT_SECRETS = """
import json, django
django.setup()
from django.conf import settings as s
print(json.dumps([s.SECRET_KEY, s.AGENT_STATE_SECRET]))
"""


def example_value(name: str) -> str:
    match = re.search(rf"^{name}=(.+)$", EXAMPLE.read_text(), re.MULTILINE)
    assert match, f"{name} is not set in .env.example"
    return match.group(1).strip()


@pytest.mark.parametrize("name", SECRETS)
def test_the_example_placeholder_stops_start_up_naming_the_variable(name):
    placeholder = example_value(name)
    proc = settings_process(PRINT_SECRETS, **{name: placeholder})
    assert proc.returncode != 0
    last_line = proc.stderr.strip().splitlines()[-1]
    assert "ImproperlyConfigured" in last_line and name in last_line, last_line
    assert ".env.example" in last_line


def test_the_whole_example_file_unchanged_does_not_start_and_manage_check_says_so():
    proc = manage_process("check", **{name: example_value(name) for name in SECRETS})
    assert proc.returncode != 0
    assert "DJANGO_SECRET_KEY still holds .env.example's placeholder" in proc.stderr


def test_debug_mode_still_starts_with_the_example_values():
    proc = settings_process(
        PRINT_SECRETS, DJANGO_DEBUG="1", **{name: example_value(name) for name in SECRETS}
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == [example_value(n) for n in SECRETS]


def test_real_secrets_start_with_debug_off():
    proc = settings_process(PRINT_SECRETS, DJANGO_SECRET_KEY="k" * 50, AGENT_STATE_SECRET="a" * 50)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == ["k" * 50, "a" * 50]
