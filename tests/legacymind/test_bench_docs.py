"""``bench/_docs.run_prepend``: a benchmark's ``--write`` adds its run on top of the section and
keeps the runs recorded before it."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[2] / "bench"))
from _docs import run_prepend

DOC = """# Benchmarks

## Retrieval: the selector

### 2026-11-20, an earlier run

retrieval figures

## Think: `POST /api/v1/think` (`bench/think.py`)

### 2026-11-24, eighth session

curated history

## Crux

crux figures
"""

RUN = [
    "## Think: `POST /api/v1/think` (`bench/think.py`)",
    "",
    "setup line",
    "",
    "### 100,000 entities",
    "",
    "| figure | ours |",
]


def test_a_run_goes_on_top_of_its_section_and_the_rest_stays(tmp_path):
    path = tmp_path / "benchmarks.md"
    path.write_text(DOC)

    run_prepend(path, section="Think", title="2026-11-25: new run", lines=RUN)

    text = path.read_text()
    think = text.index("## Think")
    new, old = text.index("### 2026-11-25: new run"), text.index("### 2026-11-24, eighth session")
    assert think < new < text.index("setup line") < text.index("#### 100,000 entities") < old
    assert text.count("## Think") == 1 and "curated history" in text
    assert text.index("retrieval figures") < think < old < text.index("## Crux")
    assert text.endswith("crux figures\n")
    assert "### 2026-11-25: new run\n\nsetup line\n" in text  # one blank line, not two


def test_without_the_section_one_is_appended_with_the_run(tmp_path):
    path = tmp_path / "benchmarks.md"
    path.write_text("# Benchmarks\n\n## Crux\n\ncrux figures\n")

    run_prepend(path, section="Think", title="first run", lines=RUN)

    text = path.read_text()
    assert text.index("crux figures") < text.index("## Think: `POST")
    assert text.index("## Think") < text.index("### first run") < text.index("#### 100,000")


def test_a_missing_file_is_created(tmp_path):
    path = tmp_path / "benchmarks.md"

    run_prepend(path, section="Think", title="first run", lines=["plain line"])

    assert path.read_text() == "# Benchmarks\n\n## Think\n\n### first run\n\nplain line\n"
