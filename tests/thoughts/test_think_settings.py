"""The think pipeline's settings: spec defaults, and a bad value stops start-up naming it.
Each case loads the settings in a fresh interpreter (no database is touched)."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.support.settings_process import settings_process

PRINT = """
import json, django
django.setup()
from django.conf import settings as s
names = [n for n in dir(s) if n.startswith(("THINK_INJECT", "KG_CAND", "THINK_VERIFY",
         "THINK_ORBITAL", "THINK", "THINK_SUBMODE", "THINK_PERSIST"))]
print(json.dumps({n: getattr(s, n) for n in names}))
"""


def start(**overrides: str) -> subprocess.CompletedProcess[str]:
    return settings_process(PRINT, **overrides)


def test_defaults_follow_the_spec_and_the_readme_decisions():
    proc = start()
    assert proc.returncode == 0, proc.stderr[-2000:]
    s = json.loads(proc.stdout.strip().splitlines()[-1])
    assert s["THINK_TAG_WHITELIST"] == ["plan", "debug", "dx", "photography", "idea"]
    assert (s["THINK_INJECT_T1"], s["THINK_INJECT_T2"], s["THINK_INJECT_T3"]) == (0.6, 0.4, 0.25)
    assert s["THINK_INJECT_FLOOR"] == 0.15
    assert s["KG_CANDIDATES"] == 500
    assert [
        s[f"KG_CANDIDATES_THINK_{tool}"] for tool in ("CONVO", "PLAN", "DEBUG", "BUILD", "STUCK")
    ] == [500, 800, 1000, 400, 600]
    assert (
        s["THINK_VERIFY_TOPK"],
        s["THINK_VERIFY_MIN_SIM"],
        s["THINK_VERIFY_EVIDENCE_LIMIT"],
    ) == (
        50,
        0.6,
        10,
    )
    assert s["THINK_PERSIST_VERIFICATION"] is True
    assert s["THINK_ENHANCE"] is False
    assert s["THINK_SUBMODE_RETRIEVAL"] is False


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("THINK_INJECT_T1", "high"),
        ("THINK_INJECT_T1", "0.7x"),  # django-environ read this as 0.7
        ("THINK_INJECT_T2", "1,5"),  # and this as 1.5
        ("THINK_INJECT_FLOOR", "1.5"),
        ("KG_CANDIDATES", "5000"),
        ("THINK_ENHANCE", "sometimes"),
        ("THINK_TAG_WHITELIST", " , "),
    ],
)
def test_a_bad_value_stops_start_up_naming_the_variable(name, value):
    proc = start(**{name: value})
    assert proc.returncode != 0
    assert "ImproperlyConfigured" in proc.stderr
    assert name in proc.stderr.strip().splitlines()[-1]


def test_a_threshold_in_any_float_notation_is_read_as_written():
    proc = start(THINK_INJECT_T1="5e-1", THINK_INJECT_T2=" 0.45 ")
    assert proc.returncode == 0, proc.stderr[-2000:]
    s = json.loads(proc.stdout.strip().splitlines()[-1])
    assert (s["THINK_INJECT_T1"], s["THINK_INJECT_T2"]) == (0.5, 0.45)


def test_the_general_pool_is_every_mode_pool_that_is_not_set_itself():
    """KG_CANDIDATES was read and never used: every think mode has its own pool."""
    proc = start(KG_CANDIDATES="120", KG_CANDIDATES_THINK_PLAN="900")
    assert proc.returncode == 0, proc.stderr[-2000:]
    s = json.loads(proc.stdout.strip().splitlines()[-1])
    pools = [s[f"KG_CANDIDATES_THINK_{m}"] for m in ("CONVO", "PLAN", "DEBUG", "BUILD", "STUCK")]
    assert pools == [120, 900, 120, 120, 120]
