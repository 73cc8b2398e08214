"""The local model's OpenMP threads spin briefly before they sleep (GOMP_SPINCOUNT 3000, see
``legacymind.providers.embeddings.local``) unless the operator chose how they wait. Checked in a
fresh process each, since OpenMP reads its settings once when torch loads it: GNU OpenMP itself
reports the spin count it took (OMP_DISPLAY_ENV=VERBOSE)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LOAD = (
    "import sys\n"
    "from legacymind.providers.embeddings.local import LocalEmbedder\n"
    "assert 'torch' not in sys.modules\n"
    "vectors = LocalEmbedder().embed(['a thought about memory'])\n"
    "print(vectors.shape)\n"
)


def _spin_count_taken(**chosen: str) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
    env.update(chosen, OMP_DISPLAY_ENV="VERBOSE", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    env.setdefault("DJANGO_SECRET_KEY", "test-only")
    env.setdefault("AGENT_STATE_SECRET", "test-only")
    out = subprocess.run(
        [sys.executable, "-c", LOAD], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "(1, 384)"
    taken = set(re.findall(r"GOMP_SPINCOUNT = '(\d+)'", out.stderr))
    assert len(taken) == 1, out.stderr[-2000:]
    return taken.pop()


@pytest.mark.parametrize("unset", [{}, {"GOMP_SPINCOUNT": "", "OMP_WAIT_POLICY": ""}])
def test_the_local_model_spins_3000_times_when_nothing_is_set(unset):
    assert _spin_count_taken(**unset) == "3000"


@pytest.mark.parametrize(
    ("chosen", "taken"),
    [
        ({"GOMP_SPINCOUNT": "500"}, "500"),
        ({"OMP_WAIT_POLICY": "PASSIVE"}, "0"),  # OpenMP's own meaning of PASSIVE
    ],
)
def test_the_operators_choice_of_how_openmp_waits_is_left_alone(chosen, taken):
    assert _spin_count_taken(**chosen) == taken
