"""Crux-discovery benchmark: plays ../shared/datasets/crux_dev.jsonl against POST /v3/agent/act
with a simulated writer, plus the safety set against the distress gate, and compares the agent
with two baselines in the same run.

    EMBEDDING_PROVIDER=local python bench/crux.py [--repeat 3] [--write docs/benchmarks.md]
    python bench/crux.py --data crux   # the writer sets: train (writer_01..04), held out (05-12)

``--data`` takes ``dev`` (../shared/datasets/crux_dev.jsonl, the default), ``crux`` (the writer
sets of tests/agent/fixtures/crux, train and held-out reported separately) or a comma-separated
list of jsonl paths. Besides accuracy, uplift, questions and ECE it reports grounding (the share
of final cruxes whose cited spans all occur verbatim in the entry) and invented names
(capitalised words of a crux that the entry never uses).

The writer knows its own crux (gold_crux) and its facts and picks the quick option closest to
them (sentence-embedding cosine); when no option stands out it answers "not sure / something
else". A confirmed crux is correct when it is closer to gold_crux than to every decoy (the
dataset's rule, with all-MiniLM-L6-v2). The API runs in-process (Django test client) with a
local-memory cache, so nothing but the embedding model is needed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# Run as a script, bench/ is first on the path: no module of bench/ may shadow a package the
# URLconf imports (the MCP bench is bench/mcp_round_trip.py, not bench/mcp.py, for that reason).
# Its own modules are imported as bench._crux_*.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "legacymind.settings")
os.environ.setdefault("EMBEDDING_PROVIDER", "local")
os.environ.setdefault("DJANGO_DEBUG", "1")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.test.utils import override_settings  # noqa: E402

from bench._crux_answers import fit_answers  # noqa: E402
from bench._crux_calib import fit_confidence  # noqa: E402
from bench._crux_diagnose import diagnose  # noqa: E402
from bench._crux_play import load, run_policy, run_safety, splits  # noqa: E402
from bench._crux_summary import markdown, summarise  # noqa: E402
from legacymind.providers.embeddings import get_provider  # noqa: E402

POLICIES = {
    "facd": ("FACD (EIG - λ·cost)", True, "eig"),
    "never": ("baseline: no questions (top seed after init)", False, "eig"),
    "random": ("baseline: random question choice", True, "random"),
}


def run_all(items: list[dict[str, Any]], args: argparse.Namespace, split: str = "") -> list[dict]:
    """The policies asked for, in order (FACD first: the report compares the others with it)."""
    rows_out = args.rows.replace("{split}", split or "dev") if args.rows else ""
    wanted = [p.strip() for p in args.policies.split(",") if p.strip()]
    if args.no_baselines:
        wanted = ["facd"]
    elif args.skip_random:
        wanted = [p for p in wanted if p != "random"]
    return [
        run_policy(
            items,
            name=POLICIES[key][0],
            ask=POLICIES[key][1],
            policy=POLICIES[key][2],
            repeat=args.repeat,
            rows_out=rows_out,
        )
        for key in wanted
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--write", help="append the results section to this markdown file")
    parser.add_argument(
        "--data",
        default="dev",
        help="dev (default), crux (train and held-out writers), fresh (writer_13, 14), train, held-out (05-12), or jsonl paths",
    )
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument(
        "--repeat", type=int, default=3, help="plays of each item per policy (fresh seeds each)"
    )
    parser.add_argument(
        "--no-baselines", action="store_true", help="play the FACD policy only (a quicker run)"
    )
    parser.add_argument(
        "--rows",
        default="",
        help="append every play (item, posterior, confidence, correct, exit) to this jsonl; "
        "{split} in the path is replaced by the split's name (calibration fits read it)",
    )
    parser.add_argument(
        "--policies",
        default="facd,never,random",
        help="which to play, comma-separated, in order: facd, never (no questions), random",
    )
    parser.add_argument(
        "--skip-random", action="store_true", help="leave out the random-question baseline"
    )
    parser.add_argument(
        "--fit-confidence",
        default="",
        help="fit the reported-confidence mapping on a --rows file of the train writers, print "
        "the settings and leave-one-writer-out figures, and stop",
    )
    parser.add_argument(
        "--fit-answers",
        default="",
        help="fit the answer model (AGENT_ANSWER_BETA, AGENT_UNSURE_*, AGENT_PERSONA_BETA) by "
        "maximum likelihood on the questions of a --rows file of the train writers, print it "
        "against the shipped settings leave-one-writer-out, and stop",
    )
    parser.add_argument(
        "--summarise",
        default="",
        help="figures of these --rows files (held out) with item-bootstrap intervals, under the "
        "mapping --fit-confidence fits or, without it, the shipped one",
    )
    parser.add_argument(
        "--diagnose",
        action="store_true",
        help="say where the FACD plays of --data lose accuracy (no seed passes, the writer's "
        "pick, the final wording) and the composer's ceiling with the gold spans, and stop",
    )
    args = parser.parse_args()
    if args.fit_answers:
        print(fit_answers(args.fit_answers))
        return
    if args.fit_confidence:
        text, same, other = fit_confidence(args.fit_confidence)
        print(text)
        if args.summarise:
            print(summarise(args.summarise, same, other))
        return
    if args.summarise:  # under the shipped mapping: the confidence the agent reports
        print(summarise(args.summarise, settings.AGENT_FIT_SAME, settings.AGENT_FIT_OTHER))
        return
    cache = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    texts, everything = [], {}
    with override_settings(CACHES=cache, ALLOWED_HOSTS=["*"], AGENT_RATE_PER_MINUTE=0):
        if args.diagnose:
            for name, items in splits(args.data).items():
                print(f"## {name or 'dev'}\n" + diagnose(items[: args.limit or None], args.repeat))
            return
        for name, items in splits(args.data).items():
            if args.limit:
                items = items[: args.limit]
            results = run_all(items, args, name)
            safety = (
                run_safety(load("crux_safety_dev.jsonl"), load("crux_dev.jsonl"))
                if args.data == "dev"
                else {}
            )
            texts.append(markdown(results, safety, get_provider().model, title=name))
            everything[name or "dev"] = results
    text = "\n".join(texts)
    print(text)
    print(json.dumps(everything, indent=1, default=str))
    if args.write:
        with open(args.write, "a") as fh:
            fh.write("\n" + text)


if __name__ == "__main__":
    main()
