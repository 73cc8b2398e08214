"""The local model (all-MiniLM-L6-v2) with our GOMP_SPINCOUNT against GNU OpenMP's default, alone
and beside a process that keeps one CPU busy (Postgres, a web worker, anything on the machine).

    python bench/local_embed.py [--repeat 3] [--texts 1500] [--single 300]

OpenMP reads its settings once, when torch loads, so each pass is its own process: ours (the
provider as configured, GOMP_SPINCOUNT 3000 unless set) and the baseline (GOMP_SPINCOUNT=300000,
GNU OpenMP's own default, which the provider leaves alone as an operator's choice), alternating;
the median of ``--repeat`` passes of each is reported. Each pass measures one text at a time (as
think embeds) and batches of 1,024 (as reembed), with the machine otherwise idle, then the
batches again while a busy-loop process holds one CPU. Texts are thoughts of 15-30 words.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np
from _common import machine, median
from reembed import WORDS

from legacymind.providers.embeddings.local import (
    GOMP_SPINCOUNT,
    OPENMP_OWN_SPINCOUNT,
    LocalEmbedder,
)

BATCH = 1024
BUSY = "import time\nend = time.time() + 600\nwhile time.time() < end: pass\n"


def texts(count: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, size=int(rng.integers(15, 31)))) for _ in range(count)]


def batches_per_second(embedder: LocalEmbedder, corpus: list[str]) -> float:
    started = time.perf_counter()
    for i in range(0, len(corpus), BATCH):
        embedder.embed(corpus[i : i + BATCH])
    return len(corpus) / (time.perf_counter() - started)


def one_pass(count: int, single: int, seed: int) -> dict[str, float]:
    """What a child process measures; printed as JSON."""
    embedder = LocalEmbedder()
    corpus = texts(count, seed)
    embedder.embed(corpus[:BATCH])  # load the model, warm up
    latencies = []
    for text in corpus[:single]:
        started = time.perf_counter()
        embedder.embed([text])
        latencies.append((time.perf_counter() - started) * 1000)
    alone = batches_per_second(embedder, corpus)
    busy = subprocess.Popen([sys.executable, "-c", BUSY])
    try:
        time.sleep(0.3)  # scheduled and spinning
        beside = batches_per_second(embedder, corpus)
    finally:
        busy.kill()
        busy.wait()
    return {
        "single_p50_ms": float(np.percentile(latencies, 50)),
        "single_p95_ms": float(np.percentile(latencies, 95)),
        "batch_alone": alone,
        "batch_beside_busy": beside,
        "spincount": float(os.environ.get("GOMP_SPINCOUNT", "nan")),
    }


def child(spincount: str | None, args: argparse.Namespace) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
    if spincount is not None:
        env["GOMP_SPINCOUNT"] = spincount
    command = [sys.executable, __file__, "--child", f"--texts={args.texts}"]
    command += [f"--single={args.single}", f"--seed={args.seed}"]
    out = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


ROWS = (
    ("one text at a time, p50 (ms)", "single_p50_ms", False),
    ("one text at a time, p95 (ms)", "single_p95_ms", False),
    ("batches of 1,024, alone (texts/s)", "batch_alone", True),
    ("batches of 1,024, one CPU busy (texts/s)", "batch_beside_busy", True),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--texts", type=int, default=1500)
    parser.add_argument("--single", type=int, default=300)
    parser.add_argument("--seed", type=int, default=20261127)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(one_pass(args.texts, args.single, args.seed)))
        return
    ours, base = [], []
    for _ in range(args.repeat):
        ours.append(child(None, args))
        base.append(child(OPENMP_OWN_SPINCOUNT, args))
    assert all(p["spincount"] == float(GOMP_SPINCOUNT) for p in ours), ours
    print(f"# The local model and OpenMP's spin count ({machine()})\n")
    print(
        f"Median of {args.repeat} alternating passes, each its own process; {args.texts:,} "
        f"texts of 15-30 words.\n"
    )
    print(
        f"| figure | ours (GOMP_SPINCOUNT {GOMP_SPINCOUNT}) | baseline (OpenMP's default, "
        f"{OPENMP_OWN_SPINCOUNT}) | ours / baseline |"
    )
    print("|---|---|---|---|")
    for label, key, higher_better in ROWS:
        mine, theirs = median([p[key] for p in ours]), median([p[key] for p in base])
        shown = f"{mine / theirs:.2f}x" + (" (higher is better)" if higher_better else "")
        print(f"| {label} | {mine:,.2f} | {theirs:,.2f} | {shown} |", flush=True)
    every = "; ".join(
        f"{key}: ours {[round(p[key], 1) for p in ours]}, baseline {[round(p[key], 1) for p in base]}"
        for _, key, _ in ROWS
    )
    print(f"\nEvery pass: {every}.")


if __name__ == "__main__":
    main()
