"""Writing a benchmark's results into docs/benchmarks.md without losing the runs before it.

No Django here (bench/_common sets Django up on import): the tests import this module alone.
"""

from __future__ import annotations

import re
from pathlib import Path


def run_prepend(path: Path, *, section: str, title: str, lines: list[str]) -> None:
    """Put one run's results at the top of the ``## <section>`` section of ``path``, under
    ``### <title>``, above the runs already there (the curated history stays as it is).

    ``lines`` is the run's output as the benchmark prints it: a leading ``## `` heading is
    dropped (the section has one) and its ``### `` headings become ``#### ``. Without such a
    section, one is appended with the run as its first block."""
    text = path.read_text() if path.exists() else "# Benchmarks\n"
    body = list(lines)
    if body and body[0].startswith("## "):
        heading, body = body[0], body[1:]
    else:
        heading = f"## {section}"
    body = [f"#{line}" if line.startswith("### ") else line for line in body]
    while body and not body[0].strip():
        body.pop(0)
    block = "\n".join([f"### {title}", "", *body]).strip() + "\n"
    found = re.search(rf"^## {re.escape(section)}\b[^\n]*\n", text, re.M)
    if found is None:
        text = f"{text.rstrip()}\n\n{heading}\n\n{block}"
    else:
        after = text[found.end() :].lstrip("\n")
        text = f"{text[: found.end()]}\n{block}\n{after}"
    path.write_text(text.rstrip() + "\n")
