"""Think under gunicorn with the local model, the default without an OpenAI key: requests/s of
what the app ships against a baseline that undoes one of its choices, in the same run. The
web workers' model threads, Postgres and the clients share the machine's CPUs, as on a small
server.

    python bench/web_local.py [--compare coalesce|spincount] [--entities 10000] [--seconds 15]
                              [--repeat 2] [--clients 16]

``--compare coalesce`` (the default): single texts that the workers' threads embed at the same
moment go to the model as one batch (ours) against each on its own (``EMBEDDING_COALESCE=0``).
``--compare spincount``: OpenMP threads that spin 3,000 times (the provider's GOMP_SPINCOUNT,
ours) against GNU OpenMP's own 300,000.

Runs in its own database (``bench_web``) with a private Redis and one Celery worker, as
bench/web.py does; the KG's entities carry the local model's vectors, so each think runs its
memory injection. Passes alternate (ours, baseline, baseline, ours, ...), each on the same
freshly loaded data; the median of ``--repeat`` of each is reported.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.support.redis_server import redis_url

_redis = contextlib.ExitStack()
os.environ["REDIS_URL"] = re.sub(r"/\d+$", "/12", _redis.enter_context(redis_url()))
atexit.register(_redis.close)
for name in ("OPENAI_API_KEY", "EMBEDDING_DIM", "EMBEDDING_COALESCE", "GOMP_SPINCOUNT"):
    os.environ.pop(name, None)
os.environ.update(
    BENCH_DATABASE_NAME=os.environ.get("BENCH_DATABASE_NAME", "bench_web"),
    EMBEDDING_PROVIDER="local",
    KG_AUTO_EXTRACT="0",
    LOG_LEVEL="warning",
)

import numpy as np  # noqa: E402
from _common import machine, median, ratio, use_bench_database  # noqa: E402
from _think_data import HINT, entity_names, load, query_texts  # noqa: E402
from _think_load import bench_token, gunicorn_label, start_worker, throughput  # noqa: E402

from legacymind.providers.embeddings import get_provider  # noqa: E402
from legacymind.providers.embeddings.local import (  # noqa: E402
    GOMP_SPINCOUNT,
    OPENMP_OWN_SPINCOUNT,
)

# What each pass adds to the environment gunicorn starts with: (label, variables).
COMPARISONS = {
    "coalesce": (
        ("ours (texts coalesced)", {}),
        ("baseline (EMBEDDING_COALESCE=0)", {"EMBEDDING_COALESCE": "0"}),
    ),
    "spincount": (
        (f"ours (GOMP_SPINCOUNT {GOMP_SPINCOUNT})", {}),
        (
            f"baseline (OpenMP's default, {OPENMP_OWN_SPINCOUNT})",
            {"GOMP_SPINCOUNT": OPENMP_OWN_SPINCOUNT},
        ),
    ),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--compare", choices=sorted(COMPARISONS), default="coalesce")
    parser.add_argument("--entities", type=int, default=10_000)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    db = use_bench_database()
    rng = np.random.default_rng(args.seed)
    texts = query_texts(rng, 200)
    names = entity_names(args.entities, texts, 30, args.seed)
    vectors = get_provider().embed([f"{n} (concept)" for n in names])
    token = bench_token("bench-web")
    worker = start_worker()
    sides = COMPARISONS[args.compare]
    passes: dict[str, list[float]] = {label: [] for label, _ in sides}
    details: list[str] = []
    try:
        for turn in range(args.repeat):
            # Ours first, then the baseline, then the other way round: a pass that follows
            # another is not favoured. Each starts from the same data (a pass adds thoughts).
            for label, variables in sides[:: 1 if turn % 2 == 0 else -1]:
                load(names, vectors, args.seed)
                # The web workers take the environment as it is when gunicorn starts.
                for _, other in sides:
                    for name in other:
                        os.environ.pop(name, None)
                os.environ.update(variables)
                out, rps = throughput(
                    texts,
                    args.seconds,
                    token=token,
                    hint=HINT,
                    worker_pid=worker.pid,
                    clients=args.clients,
                )
                passes[label].append(rps)
                details.append(f"{label}: {out[0]}")
                print(details[-1], flush=True)
    finally:
        worker.terminate()
    (ours_label, _), (base_label, _) = sides
    ours, base = median(passes[ours_label]), median(passes[base_label])
    print(
        f"\n# Think under gunicorn with the local model ({machine()})\n\n"
        f"Database `{db}`, {args.entities:,} entities, {args.clients} concurrent clients for "
        f"{args.seconds:g} s a pass, think at scale 3, gunicorn.conf.py "
        f"({gunicorn_label('gthread')}); median of {args.repeat} passes each.\n\n"
        f"| figure | {ours_label} | {base_label} | ratio |\n"
        "|---|---|---|---|\n"
        f"| requests/s | {ours:.1f} | {base:.1f} | {ratio(ours, base)} |\n\n"
        f"Every pass (requests/s): ours {[round(x, 1) for x in passes[ours_label]]}, "
        f"baseline {[round(x, 1) for x in passes[base_label]]}.\n\n" + "\n\n".join(details)
    )


if __name__ == "__main__":
    main()
