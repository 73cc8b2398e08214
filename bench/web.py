"""Web concurrency benchmark: requests/s of ``POST /api/v1/think`` under gunicorn when the
embedder is a remote API, with the repo's gunicorn.conf.py (threaded workers) against the sync
workers the app shipped with before (the baseline), in the same run.

The embeddings API is a real HTTP server on 127.0.0.1 speaking the OpenAI wire format (the
tests' ``OpenAIStub``) that answers each call after ``--latency-ms`` (OpenAI's embeddings take
~100-300 ms from a data centre); its vectors are the hash embedder's, 384-d, and the KG's
entities carry the same model, so each think also runs its memory injection. Both servers have
2 worker processes and ``--clients`` concurrent clients; a sync worker holds its process for
the whole embeddings call, a threaded one serves its other requests meanwhile. ``--latency-ms
0`` shows the CPU-bound case, where the two kinds should be alike.

Runs in its own database (``bench_web``), with a private Redis and one Celery worker for the
access bumps, as in production:

    python bench/web.py [--latency-ms 100 0] [--entities 10000] [--seconds 15]
                        [--write docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import os
import re
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.support.openai_server import OpenAIStub
from tests.support.redis_server import redis_url

DIM = 384
LATENCY = [0.0]  # seconds the stub waits before answering; set per pass


def _slow_hash(texts: list[str]) -> list[list[float]]:
    from legacymind.providers.embeddings import HashEmbedder

    time.sleep(LATENCY[0])
    return HashEmbedder(dim=DIM).embed(texts).tolist()


# The embeddings API and Redis must be known before Django reads its settings (in _common).
STUB = OpenAIStub().start()
STUB.embed_fn = _slow_hash
atexit.register(STUB.stop)
_redis = contextlib.ExitStack()
os.environ["REDIS_URL"] = re.sub(r"/\d+$", "/12", _redis.enter_context(redis_url()))
atexit.register(_redis.close)
os.environ.update(
    BENCH_DATABASE_NAME=os.environ.get("BENCH_DATABASE_NAME", "bench_web"),
    EMBEDDING_PROVIDER="openai",
    OPENAI_API_KEY="sk-bench-only",
    OPENAI_BASE_URL=STUB.base_url,
    EMBEDDING_MODEL="text-embedding-3-small",
    EMBEDDING_DIM=str(DIM),
    EMBEDDING_MAX_RETRIES="0",
    KG_AUTO_EXTRACT="0",
    LOG_LEVEL="warning",
)

import numpy as np  # noqa: E402
from _common import machine, ratio, use_bench_database  # noqa: E402
from _docs import run_prepend  # noqa: E402
from _think_data import HINT, entity_names, load, query_texts  # noqa: E402
from _think_load import bench_token, gunicorn_label, start_worker, throughput  # noqa: E402

from legacymind.providers.embeddings import HashEmbedder  # noqa: E402

CLASSES = ("gthread", "sync")  # ours (gunicorn.conf.py), then the baseline


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency-ms", type=float, nargs="+", default=[100.0, 0.0])
    parser.add_argument("--entities", type=int, default=10_000)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--write", type=Path)
    args = parser.parse_args()
    db = use_bench_database()
    rng = np.random.default_rng(args.seed)
    texts = query_texts(rng, 200)
    names = entity_names(args.entities, texts, 30, args.seed)
    load(names, HashEmbedder(dim=DIM).embed([f"{n} (concept)" for n in names]), args.seed)
    token = bench_token("bench-web")
    worker = start_worker()
    lines = [
        "## Web concurrency: think under gunicorn with a remote embedder (`bench/web.py`)",
        "",
        f"{datetime.now(UTC):%Y-%m-%d}, {machine()}, database `{db}`, {args.entities:,} "
        f"entities, the `openai` provider against a local OpenAI-format server, "
        f"{args.clients} concurrent clients for {args.seconds:g} s a pass, think at scale 3, "
        f"gunicorn with 2 worker processes. Ours: the repo's `gunicorn.conf.py` "
        f"({gunicorn_label('gthread')}); baseline: the same with `--worker-class sync`.",
        "",
        "| embeddings API latency | ours requests/s | baseline requests/s | ratio |",
        "|---|---|---|---|",
    ]
    details: list[str] = []
    for latency_ms in args.latency_ms:
        LATENCY[0] = latency_ms / 1000
        rps: dict[str, float] = {}
        for worker_class in CLASSES:
            out, rps[worker_class] = throughput(
                texts,
                args.seconds,
                token=token,
                hint=HINT,
                worker_pid=worker.pid,
                clients=args.clients,
                worker_class=worker_class,
            )
            details += [f"{latency_ms:g} ms: {out[0]}", ""]
            print(details[-2], flush=True)
        ours, base = rps["gthread"], rps["sync"]
        lines.append(f"| {latency_ms:g} ms | {ours:.0f} | {base:.0f} | {ratio(ours, base)} |")
    worker.terminate()
    latencies = " ".join(f"{ms:g}" for ms in args.latency_ms)
    lines += ["", *details, f"Reproduce with `python bench/web.py --latency-ms {latencies}`."]
    print("\n".join(lines))
    if args.write:
        run_prepend(
            args.write,
            section="Web concurrency",
            title=f"{datetime.now(UTC):%Y-%m-%d}",
            lines=lines,
        )


if __name__ == "__main__":
    main()
